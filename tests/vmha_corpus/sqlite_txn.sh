# sqlite3 writing transactions to a database in the working directory, one
# line printed after each commit; the table's checksum at the end.
set -e
n=${1:-200}
{
  echo "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);"
  for i in $(seq 1 "$n"); do
    echo "BEGIN; INSERT INTO t (v) VALUES (printf('%0100d', $i)); INSERT INTO t (v) VALUES ('row ' || $i); COMMIT;"
    echo ".print txn $i committed"
  done
  echo "SELECT count(*), sum(length(v)) FROM t;"
} > txn.sql
sqlite3 -bail db.sqlite < txn.sql
