"""Every closed API code has a plain sentence in both languages (issue 13 item 7): the browser
never shows a bare code where a person needs words."""

from __future__ import annotations

import re
from pathlib import Path

from dsh_host.web import ERROR_CODES

ERRORS_JS = Path(__file__).resolve().parents[2] / "src/dsh_host/web/static/errors.js"


def _sentences(language: str) -> set[str]:
    text = ERRORS_JS.read_text(encoding="utf-8")
    block = re.search(rf"\n  {language}: Object\.freeze\(\{{(.*?)\n  \}}\)", text, re.DOTALL)
    assert block is not None, language
    return set(re.findall(r"^\s+([a-z_]+):", block.group(1), re.MULTILINE))


def test_every_api_error_code_has_a_sentence_in_english_and_chinese() -> None:
    for language in ("en", "zh"):
        missing = sorted(set(ERROR_CODES) - _sentences(language))
        assert missing == [], f"{language}: no sentence for {missing}"
