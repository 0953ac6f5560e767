"""Chinese dates on the pages, as Chinese pages write them (2026年11月26日 09:30)."""

SHORT_DATETIME_FORMAT = "Y年n月j日 H:i"
SHORT_DATE_FORMAT = "Y年n月j日"
