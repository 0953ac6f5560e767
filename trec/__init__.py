"""TREC qrels and run files: reading (vectorized, trec_eval-exact) and writing. Imports no Django."""
