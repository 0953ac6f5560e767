"""Numbers as the decision's reasons write them (three decimals and a true minus sign), and the sentences
themselves as `Phrase`s: English strings that keep their template and values, so that a page can say them in
its reader's language (`metrics.reports.language.say`) while the computation stays free of Django."""

import math
from collections.abc import Mapping


def number(value: float) -> str:
    """0.125 → "0.125", -0.01 → "−0.010", NaN → "n/a"."""
    return "n/a" if math.isnan(value) else f"{value:.3f}".replace("-", "\N{MINUS SIGN}")


def signed(value: float) -> str:
    """0.031 → "+0.031", -0.031 → "−0.031"."""
    return f"{value:+.3f}".replace("-", "\N{MINUS SIGN}")


class Phrase(str):
    """The English sentence `template % values`, which also keeps `template` (a catalogue's msgid, with
    `%(name)s` placeholders) and `values` (strings, numbers already written, or Phrases said in turn)."""

    template: str
    values: dict[str, object]

    def __new__(cls, template: str, values: Mapping[str, object] | None = None) -> "Phrase":
        values = dict(values or {})
        text = super().__new__(cls, template % values if values else template)
        text.template, text.values = template, values
        return text

    def __reduce__(self):
        return Phrase, (self.template, self.values)


def phrase(template: str, **values: object) -> Phrase:
    """A sentence for people. `make messages` gathers every `phrase("...")` template into the catalogue."""
    return Phrase(template, values)
