"""scripts/c_source.py: split C source into its code and its comments (for the source checks in scripts/)."""


def split_comments(text):
    """(code, comments): two copies of text of the same shape, line breaks kept, so line numbers agree. `code` has
    every comment blanked (string and character literals kept: an #include names a header); `comments` has
    everything outside comments blanked (string literals are code, not prose)."""
    code, comm, i, n = [], [], 0, len(text)

    def blank(s):
        return ''.join(ch if ch == '\n' else ' ' for ch in s)

    while i < n:
        if text.startswith('//', i) or text.startswith('/*', i):
            if text[i + 1] == '/':
                j = text.find('\n', i)
                j = n if j < 0 else j
            else:
                j = text.find('*/', i + 2)
                j = n if j < 0 else j + 2
            code.append(blank(text[i:j]))
            comm.append(text[i:j])
        elif text[i] in '"\'':
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            code.append(text[i:j])
            comm.append(blank(text[i:j]))
        else:
            j = i + 1
            code.append(text[i])
            comm.append(blank(text[i]))
        i = j
    return ''.join(code), ''.join(comm)
