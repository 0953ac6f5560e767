"""English dates on the pages: ISO, as the team's logs and files write them."""

SHORT_DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATE_FORMAT = "Y-m-d"
