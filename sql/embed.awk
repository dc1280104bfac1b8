# embed.awk: turn sql/schema.sql into a C string, so that `conduitd
# --init-db` carries the schema it was built with and needs no data path.
#   awk -v name=schema_sql -f sql/embed.awk sql/schema.sql > schema.c
BEGIN { printf "/* Generated from sql/schema.sql by sql/embed.awk: do not edit. */\n" }
BEGIN { printf "const char %s[] =\n", name }
{
    gsub(/\\/, "\\\\")
    gsub(/"/, "\\\"")
    gsub(/\t/, "\\t")
    gsub(/\?/, "\\?")
    printf "    \"%s\\n\"\n", $0
}
END { print "    ;" }
