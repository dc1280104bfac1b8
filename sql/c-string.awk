# c-string.awk: c_escape(s), the text of s as the inside of a C string
# literal, byte for byte: the compiler turns it back into exactly s.
# Shared by gen-queries.awk and embed.awk (awk -f sql/c-string.awk -f ...).
#
# Built one character at a time rather than with gsub(): in a gsub()
# replacement a backslash is itself an escape, so gsub(/\\/, "\\\\") writes
# one backslash, not two, and E'\x1f' in the SQL became a raw 0x1F byte in
# the C string (and \n a newline) without anyone noticing.
function c_escape(s,    out, i, n, c) {
    out = ""
    n = length(s)
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        if (c == "\\")
            out = out "\\\\"
        else if (c == "\"")
            out = out "\\\""
        else if (c == "\t")
            out = out "\\t"
        else if (c == "?")
            out = out "\\?" # "??x" never reads as a trigraph
        else
            out = out c
    }
    return out
}
