"""The computation's sentences (`Phrase`) in the language of the page or report being written."""

from django.utils.translation import gettext

from metrics.compute.wording import Phrase


def say(text: object) -> str:
    """`text` in the active language: a Phrase through the catalogue, its values said in turn; anything
    else as it is (data, names)."""
    if not isinstance(text, Phrase):
        return "" if text is None else str(text)
    template = gettext(text.template)
    if not text.values:
        return template
    return template % {
        name: say(value) if isinstance(value, Phrase) else value for name, value in text.values.items()
    }
