"""Django's makemessages, which also gathers the templates of `phrase("...")` and `Phrase("...", values)`
(`metrics.compute.wording`): the computation's sentences, which pages and reports say in their language;
and those of `TrecFormatError(path, line, "...", values)` (`trec.tokenizer`, `trec.files`) and
`MeasureError("...", values)` (`trec.measures`), which an upload's errors say."""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [
        *makemessages.Command.xgettext_options,
        "--keyword=phrase",
        "--keyword=Phrase",
        "--keyword=TrecFormatError:3",
        "--keyword=TrecTooLargeError:3",
        "--keyword=MeasureError:1",
    ]
