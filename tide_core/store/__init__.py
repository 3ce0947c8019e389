"""What TIDE keeps in the warehouse: the table registry and DDL, the span cache, the released tables.

``tables`` (every TIDE table: name, Arrow schema, partition, clustering), ``ddl`` (the BigQuery
DDL written from it), ``span_cache`` (recognized spans and note statuses, reviewer decisions
re-applied on read), ``release_store`` (every read of the released tables, audits, drift and
guard scores) and ``release_content`` (the row hash and content fingerprint of a release).
"""
