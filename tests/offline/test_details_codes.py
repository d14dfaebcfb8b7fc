"""The event-details codes have one source (``offline.details_codes``): the TypeScript module
the page reads them from is generated from it, and is current."""

from __future__ import annotations

import re

from tfprof_nb.offline import details, details_codes


def test_the_typescript_codes_are_generated_from_python():
    assert details_codes.TS_MODULE.read_text() == details_codes.ts_text(), \
        "details_codes.generated.ts is stale: run `python -m tfprof_nb.offline.details_codes`"


def test_the_generated_module_holds_every_code_and_the_page_uses_it():
    text = details_codes.ts_text()
    found = dict(re.findall(r"export const (\w+) = (0x[0-9a-f]+);", text))
    assert {k: int(v, 16) for k, v in found.items()} == \
        {name: value for name, value, _ in details_codes.CODES}
    assert 'export const ARGUMENTS = "Arguments";' in text
    page = (details_codes.TS_MODULE.parent / "details.ts").read_text()
    assert '"./details_codes.generated"' in page
    assert not re.search(r"0xfffffff[c-f]", page)  # no second copy of a code
    # the codes cannot be taken for texts: a block holds fewer than NO_ROW texts
    assert details.NO_ROW == min(v for _, v, _ in details_codes.CODES) == 2**32 - 4
