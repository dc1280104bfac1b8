# embed.awk: turn sql/schema.sql into a C string, so that `conduitd
# --init-db` carries the schema it was built with and needs no data path.
#   awk -v name=schema_sql -f sql/c-string.awk -f sql/embed.awk sql/schema.sql > schema.c
BEGIN { printf "/* Generated from sql/schema.sql by sql/embed.awk: do not edit. */\n" }
BEGIN { printf "const char %s[] =\n", name }
{ printf "    \"%s\\n\"\n", c_escape($0) }
END { print "    ;" }
