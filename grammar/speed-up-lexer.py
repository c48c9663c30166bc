#!/usr/bin/env python3
"""Makes the lexer that `tree-sitter generate` wrote faster; run it after every generate.

    cd grammar && tree-sitter generate && python3 speed-up-lexer.py

Two rewrites, neither of which changes what is lexed (`cargo test --test grammar` checks):

1. src/parser.c: each `ADVANCE_MAP(c1, s1, c2, s2, ...)` becomes `switch (lookahead) { case c1:
   ADVANCE(s1); ... }`. The macro compares the lookahead with every listed character in turn,
   up to 46 of them for every character of the file (a blank goes through the whole list of
   lex state 0 before it is skipped); a switch is one jump. The listed characters are
   distinct, so their order, which is not always sorted, does not matter.
2. src/tree_sitter/parser.h: `set_contains` looks at the first few ranges of a character set
   one by one before its binary search. Sets are sorted, so a character below a range's start
   is in no later range; the ASCII characters of the identifier sets are in their first five
   ranges, where the binary search over 687 or 802 ranges took ten steps for every character
   of every identifier.

Running it again changes nothing.
"""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent / "src"

ADVANCE_MAP = re.compile(r"^( *)ADVANCE_MAP\(\n(.*?)\n *\);\n", re.S | re.M)
# A C character literal or an integer, as the generator writes map keys and states.
TOKEN = re.compile(r"'(?:\\.|[^'\\])'|0x[0-9a-fA-F]+|\d+")

SET_CONTAINS = """static inline bool set_contains(const TSCharacterRange *ranges, uint32_t len, int32_t lookahead) {
  uint32_t index = 0;
  uint32_t size = len - index;
"""
SET_CONTAINS_FAST = """static inline bool set_contains(const TSCharacterRange *ranges, uint32_t len, int32_t lookahead) {
  // bankwise (grammar/speed-up-lexer.py): the ranges are sorted, and source text is mostly
  // ASCII, which the first few ranges cover; look there before the binary search.
  uint32_t head = len < 8 ? len : 8;
  for (uint32_t i = 0; i < head; i++) {
    if (lookahead < ranges[i].start) return false;
    if (lookahead <= ranges[i].end) return true;
  }
  if (head == len) return false;
  uint32_t index = head;
  uint32_t size = len - index;
"""


def switch(match: re.Match) -> str:
    indent, body = match.group(1), match.group(2)
    tokens = TOKEN.findall(body)
    if len(tokens) % 2 or not tokens:
        sys.exit(f"speed-up-lexer: cannot read ADVANCE_MAP({body.strip()[:60]}...)")
    lines = [f"{indent}switch (lookahead) {{"]
    for key, state in zip(tokens[0::2], tokens[1::2]):
        lines.append(f"{indent}  case {key}: ADVANCE({state});")
    lines.append(f"{indent}  default: break;")
    lines.append(f"{indent}}}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser_c = SRC / "parser.c"
    text = parser_c.read_text()
    text, maps = ADVANCE_MAP.subn(switch, text)
    if "ADVANCE_MAP(" in text:
        sys.exit("speed-up-lexer: an ADVANCE_MAP was left in parser.c")
    parser_c.write_text(text)

    parser_h = SRC / "tree_sitter" / "parser.h"
    header = parser_h.read_text()
    if SET_CONTAINS_FAST not in header:
        if SET_CONTAINS not in header:
            sys.exit("speed-up-lexer: set_contains in parser.h is not the one this script knows")
        header = header.replace(SET_CONTAINS, SET_CONTAINS_FAST)
        parser_h.write_text(header)
    print(f"speed-up-lexer: {maps} ADVANCE_MAPs made switches; set_contains looks at ASCII first")


if __name__ == "__main__":
    main()
