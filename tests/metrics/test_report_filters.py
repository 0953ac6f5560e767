from django.template import Context, Template


def render(source: str, **context) -> str:
    return Template("{% load reports %}{% autoescape off %}" + source + "{% endautoescape %}").render(
        Context(context)
    )


def test_markdown_cells_cannot_break_a_table_row():
    assert render("| {{ name|md_cell }} |", name="a|b\nc <d>") == "| a\\|b c <d> |"


def test_numbers_in_the_markdown_report():
    assert render("{{ x|fixed }} {{ x|fixed:3 }} {{ none|fixed }}", x=0.12345, none=None) == "0.1235 0.123 —"
    assert render("{{ x|signed }} {{ y|signed }} {{ none|signed }}", x=0.5, y=-0.25, none=None) == (
        "+0.5000 -0.2500 —"
    )
    assert render("{{ a|p_value }} {{ b|p_value }} {{ none|p_value }}", a=0.0004, b=0.04, none=None) == (
        "< 0.001 0.040 —"
    )
    nan = float("nan")
    assert render("{{ x|fixed }} {{ x|signed }} {{ x|p_value }}", x=nan) == "— — —"  # never "nan"
    assert render("{{ a|general }} {{ b|general }}", a=0.05, b=1.0) == "0.05 1"


def test_outcome_titles():
    assert render(
        "{{ a|outcome_title }}/{{ b|outcome_title }}/{{ c|outcome_title }}",
        a="launch",
        b="no_launch",
        c="inconclusive",
    ) == ("Launch/Do not launch/Inconclusive")
