"""Django's makemessages, which also gathers the templates of `phrase("...")` and `Phrase("...", values)`
(`metrics.compute.wording`): the computation's sentences, which pages and reports say in their language."""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [*makemessages.Command.xgettext_options, "--keyword=phrase", "--keyword=Phrase"]
