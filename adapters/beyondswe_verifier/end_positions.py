# beyondswe canary groups on Pythons before 3.8: the positions their syntax trees lack or give
# wrong, read from the module's tokens, and their literals as 3.8 writes them. A 3.6 or 3.7
# tree has no end positions (the groups cut a literal out of its test and write another in its
# place), puts a multi-line string at its last line with no column, and a decorated def at its
# first decorator; its literals are Num, Str, Bytes and NameConstant nodes.
#
# adapters/beyondswe_verifier/end_positions.py; used by canary_reading.parse(). Works on source
# text only; unit tests: adapters/tests/test_end_positions.py (on a 3.8+ tree with its end
# positions taken away and the older positions put in, every position found again is 3.8's).
# Python 3.6+ (ast.Constant).
import ast
import io
import tokenize

MYPY = False
if MYPY:  # the names of the type comments, for the checker only: never imported at run time
    from typing import Any, Dict, Iterator, List, Optional, Tuple  # noqa: F401
    Token = Tuple[int, str, Tuple[int, int], Tuple[int, int]]  # type, text, start, end (byte columns)

OLD_LITERALS = frozenset(["Num", "Str", "Bytes", "NameConstant", "Ellipsis"])
OPENERS = {"(": ")", "[": "]", "{": "}"}
# Statements that hold others: they end where the last statement they hold ends.
COMPOUND = frozenset(["FunctionDef", "AsyncFunctionDef", "ClassDef", "If", "For", "AsyncFor", "While", "With",
                      "AsyncWith", "Try", "TryStar", "ExceptHandler", "Match", "match_case"])
DEFS = frozenset(["FunctionDef", "AsyncFunctionDef", "ClassDef"])
_SKIPPED = frozenset([tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.INDENT, tokenize.DEDENT,
                      tokenize.ENDMARKER])


class Unreadable(Exception):
    """The module's tokens cannot be laid over its tree."""


class Tokens(object):
    """A module's significant tokens (no comments, blank-line breaks or indentation), with byte
    columns as the tree's, where each is by its start, and each bracket's partner."""

    def __init__(self, data, lines):  # type: (bytes, List[bytes]) -> None
        if data.startswith(b"\xef\xbb\xbf") or b"\r" in data.replace(b"\r\n", b""):
            # A byte-order mark shifts the first line's columns, and a lone carriage return
            # ends a line for the tree and not for the tokens.
            raise Unreadable("a byte-order mark or a lone carriage return")
        self.lines = lines
        self.toks = []  # type: List[Token]
        try:
            for info in tokenize.tokenize(io.BytesIO(data).readline):
                if info.type == tokenize.ENCODING and info.string not in ("utf-8", "utf-8-sig"):
                    raise Unreadable("encoded as " + info.string)
                if info.type not in _SKIPPED:
                    self.toks.append((info.type, info.string, self._bytes(info.start), self._bytes(info.end)))
        except (tokenize.TokenError, SyntaxError, UnicodeError) as e:
            raise Unreadable(str(e)) from e
        self.at = dict((t[2], i) for i, t in enumerate(self.toks))  # type: Dict[Tuple[int, int], int]
        self.partner = {}  # type: Dict[int, int]
        stack = []  # type: List[int]
        for i, t in enumerate(self.toks):
            if t[1] in OPENERS or _kind(t) == "FSTRING_START":
                stack.append(i)
            elif stack and (t[1] == OPENERS.get(self.toks[stack[-1]][1]) or
                            (_kind(t) == "FSTRING_END" and _kind(self.toks[stack[-1]]) == "FSTRING_START")):
                self.partner[stack.pop()] = i

    def _bytes(self, pos):  # type: (Tuple[int, int]) -> Tuple[int, int]
        row, col = pos
        if 0 < row <= len(self.lines) and col:
            line = self.lines[row - 1]
            if any(b > 127 for b in bytearray(line)):
                col = len(line.decode("utf-8")[:col].encode("utf-8"))
        return row, col

    def index(self, node):  # type: (Any) -> Optional[int]
        return self.at.get((getattr(node, "lineno", 0), getattr(node, "col_offset", -1)))

    def closed(self, i, j):  # type: (int, int) -> int
        """j, or further: the partner of every bracket opened from token i to j."""
        k = i
        while k <= j:
            if k in self.partner:
                j = max(j, self.partner[k])
                k = self.partner[k]
            k += 1
        return j

    def after(self, j, text):  # type: (int, str) -> Optional[int]
        """The first token after j that is `text`."""
        for k in range(j + 1, len(self.toks)):
            if self.toks[k][1] == text:
                return k
        return None

    def string_run(self, i):  # type: (int) -> int
        """The last token of the strings written one after the other from token i (an f-string
        of 3.12+ is its tokens up to its end)."""
        j = self.partner.get(i, i)
        while j + 1 < len(self.toks) and (self.toks[j + 1][0] == tokenize.STRING or
                                          _kind(self.toks[j + 1]) == "FSTRING_START"):
            j = self.partner.get(j + 1, j + 1)
        return j

    def statement_end(self, i):  # type: (int) -> int
        """The last token of the simple statement from token i (the one before its line's end
        or its semicolon; brackets hold no line end)."""
        for k in range(i, len(self.toks)):
            if self.toks[k][0] == tokenize.NEWLINE or self.toks[k][1] == ";":
                return max(i, k - 1)
        return len(self.toks) - 1


def _kind(tok):  # type: (Token) -> str
    return tokenize.tok_name.get(tok[0], "")


def fill(tree, data, lines):  # type: (ast.Module, bytes, List[bytes]) -> ast.Module
    """The tree with 3.8's literals and positions: end positions on every node that has a start,
    multi-line strings and decorated defs where 3.8 puts them. A string whose place cannot be
    found is no literal any more (an empty f-string where it was: a site cannot stand on it).
    Raises Unreadable when the tokens cannot be laid over the tree."""
    toks = Tokens(data, lines)
    tree = _Constants().visit(tree)
    _place(tree, toks)
    _end(tree, toks)
    _check_literals(tree, data, toks)
    return tree


class _Constants(ast.NodeTransformer):
    """Num, Str, Bytes, NameConstant and Ellipsis nodes as the Constant 3.8 writes."""

    def generic_visit(self, node):  # type: (Any) -> Any
        node = ast.NodeTransformer.generic_visit(self, node)
        name = type(node).__name__
        if name not in OLD_LITERALS:
            return node
        value = {"Num": "n", "Str": "s", "Bytes": "s", "NameConstant": "value"}.get(name)
        out = ast.Constant(value=getattr(node, value) if value else Ellipsis)
        return ast.copy_location(out, node)


def _is_string(node):  # type: (Any) -> bool
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


def _place(tree, toks):  # type: (ast.Module, Tokens) -> None
    """Multi-line strings at their first line (a 3.7 tree puts them at their last, column -1), a
    decorated def at its `def` or `class` word (a 3.7 tree puts it at its first decorator)."""
    multi_line = {}  # type: Dict[int, List[Token]]
    for t in toks.toks:
        if t[0] == tokenize.STRING and t[2][0] < t[3][0]:
            multi_line.setdefault(t[3][0], []).append(t)
    nodes = ast.walk(tree)  # type: Iterator[Any]
    for node in nodes:
        if _is_string(node) and toks.index(node) is None:
            ends_here = multi_line.get(node.lineno, [])
            if len(ends_here) == 1:
                node.lineno, node.col_offset = ends_here[0][2]
        elif type(node).__name__ in DEFS and node.decorator_list:
            i = toks.index(node)
            if i is not None and toks.toks[i][1] == "@":
                last = toks.index(node.decorator_list[-1])
                k = toks.statement_end(last) + 2 if last is not None else None
                if k is not None and k < len(toks.toks) and toks.toks[k][1] in ("def", "async", "class"):
                    node.lineno, node.col_offset = toks.toks[k][2]


def _end(node, toks):  # type: (Any, Tokens) -> Optional[int]
    """Sets the end of `node` and of every node in it; returns the index of its last token
    (None for a node without a start, or one whose start is no token)."""
    name = type(node).__name__
    if isinstance(node, ast.JoinedStr):
        # Its parts' positions are not the module's before 3.8: the string is read whole.
        i = toks.index(node)
        return _set(node, toks, toks.string_run(i) if i is not None else None)
    ends = [e for e in (_end(child, toks) for child in ast.iter_child_nodes(node)) if e is not None]
    i = toks.index(node)
    if i is None:
        # No start (a context, an operator, arguments) or none at a token: it ends where the
        # last node in it does; a literal there is placed nowhere.
        last = max(ends) if ends else None
        return _set(node, toks, last) if hasattr(node, "lineno") else last
    j = None  # type: Optional[int]
    if isinstance(node, ast.Constant):
        j = toks.string_run(i) if _is_string(node) else i
    elif isinstance(node, ast.Attribute):
        j = next((k for k in range(max(ends + [i]) + 1, len(toks.toks))
                  if toks.toks[k][1] == node.attr and toks.toks[k][0] == tokenize.NAME), None)
    elif isinstance(node, (ast.Call, ast.Subscript)):
        opener = toks.after(max(ends[:1] + [i]), "(" if isinstance(node, ast.Call) else "[")
        j = toks.partner.get(opener) if opener is not None else None
    elif name in COMPOUND:
        j = max(ends + [i])
    elif isinstance(node, ast.stmt):
        j = toks.statement_end(i)
    else:
        j = toks.closed(i, max(ends + [i]))
        bracketed = toks.toks[i][1] == "(" and (not getattr(node, "elts", None) or toks.index(node.elts[0]) != i)
        if isinstance(node, ast.Tuple) and not bracketed and j + 1 < len(toks.toks) and toks.toks[j + 1][1] == ",":
            j += 1  # a tuple without brackets ends at its trailing comma
    return _set(node, toks, j)


def _set(node, toks, j):  # type: (Any, Tokens, Optional[int]) -> Optional[int]
    if j is None:
        # No place found: the node ends where it starts, and a string there is no literal.
        node.end_lineno, node.end_col_offset = node.lineno, max(node.col_offset, 0)
        node._unplaced = True
    else:
        node.end_lineno, node.end_col_offset = toks.toks[j][3]
    return j


def _check_literals(tree, data, toks):  # type: (ast.Module, bytes, Tokens) -> None
    """Every literal's text, cut out at the positions found, reads back as its value; one that
    does not (or was not placed) is turned into an empty f-string, which carries no site."""
    starts = [0]
    for line in toks.lines:
        starts.append(starts[-1] + len(line))

    def offset(row, col):  # type: (int, int) -> int
        return starts[row - 1] + col if 0 < row <= len(toks.lines) else -1

    todo = [tree]  # type: List[Any]
    while todo:
        parent = todo.pop()
        if isinstance(parent, ast.JoinedStr):
            continue
        for field, value in ast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            for n, node in enumerate(items):
                if not isinstance(node, ast.AST):
                    continue
                todo.append(node)
                if not isinstance(node, ast.Constant) or isinstance(node.value, (bool, type(None), type(Ellipsis))):
                    continue
                a = offset(node.lineno, node.col_offset)
                b = offset(node.end_lineno or 0, node.end_col_offset or 0)
                ok = not getattr(node, "_unplaced", False) and 0 <= a < b
                if ok:
                    try:
                        back = ast.literal_eval("(\n" + data[a:b].decode("utf-8") + "\n)")
                        ok = type(back) is type(node.value) and back == node.value
                    except (ValueError, SyntaxError, UnicodeError, TypeError, MemoryError, RecursionError):
                        ok = False
                if not ok:
                    stand_in = ast.copy_location(ast.JoinedStr(values=[]), node)
                    stand_in.end_lineno, stand_in.end_col_offset = node.end_lineno, node.end_col_offset
                    if isinstance(value, list):
                        value[n] = stand_in
                    else:
                        setattr(parent, field, stand_in)
