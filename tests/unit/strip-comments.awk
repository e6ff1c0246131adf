# strip-comments.awk - print each line of a C file without its /* */
# comments (one output line per input line, so line numbers still hold);
# shared by check-layers.sh and check-recv-calls.sh.
{
	line = $0
	out = ""
	while (line != "") {
		if (incomment) {
			i = index(line, "*/")
			if (!i) { line = ""; break }
			line = substr(line, i + 2)
			incomment = 0
			continue
		}
		i = index(line, "/*")
		if (!i) { out = out line; break }
		out = out substr(line, 1, i - 1)
		line = substr(line, i + 2)
		incomment = 1
	}
	print out
}
