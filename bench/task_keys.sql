-- The foreign-key checks of a campaign's relevance tasks, the two composite keys against the three single ones
-- they replaced, in one transaction that is rolled back. Run on a database holding one imported campaign:
--     psql $DATABASE_URL -f bench/task_keys.sql | grep -E 'Trigger|Execution'
-- SET CONSTRAINTS ALL IMMEDIATE makes the checks COMMIT would run show in EXPLAIN ANALYZE.
BEGIN;
CREATE TEMP TABLE t AS SELECT campaign_id, query_id, document_id, slots_spent, shuffle_key FROM annotation_relevancetask;
DELETE FROM annotation_relevancetask;
SET CONSTRAINTS ALL IMMEDIATE;
EXPLAIN (ANALYZE, COSTS OFF) INSERT INTO annotation_relevancetask (campaign_id, query_id, document_id, slots_spent, shuffle_key) SELECT * FROM t;
DELETE FROM annotation_relevancetask;
ALTER TABLE annotation_relevancetask DROP CONSTRAINT relevance_task_query_in_campaign, DROP CONSTRAINT relevance_task_document_in_campaign,
  ADD FOREIGN KEY (campaign_id) REFERENCES annotation_campaign(id) DEFERRABLE INITIALLY DEFERRED,
  ADD FOREIGN KEY (query_id) REFERENCES annotation_query(id) DEFERRABLE INITIALLY DEFERRED,
  ADD FOREIGN KEY (document_id) REFERENCES annotation_document(id) DEFERRABLE INITIALLY DEFERRED;
SET CONSTRAINTS ALL IMMEDIATE;
EXPLAIN (ANALYZE, COSTS OFF) INSERT INTO annotation_relevancetask (campaign_id, query_id, document_id, slots_spent, shuffle_key) SELECT * FROM t;
ROLLBACK;
