# Two commands do everything: `make demo` and `make test` (see README.md).
# Django 6 needs Python 3.12+: use the first such interpreter found (pyenv's too).
PYTHON ?= $(shell for p in python3.14 python3.13 python3.12 python3 $(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3); do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: demo test suite lint browser-test serve clean messages

# The translations: `make messages` gathers the marked strings into the .po catalogues (translate the new
# entries there); every other target compiles them into the .mo files Django reads (committed too, so a
# server needs no gettext). msgfmt is Debian's gettext package.
CATALOGUES := $(wildcard locale/*/LC_MESSAGES/*.po)
COMPILED := $(CATALOGUES:.po=.mo)
MAKEMESSAGES_IGNORE := --ignore=tests --ignore=bench --ignore=staticfiles --ignore=var

locale/%.mo: locale/%.po
	msgfmt --check -o $@ $<

messages: $(BIN)/.installed-runtime
	DEBUG=1 $(BIN)/python manage.py makemessages -l zh_Hans -d django -e html,txt,py,md $(MAKEMESSAGES_IGNORE) --no-obsolete --add-location=file
	DEBUG=1 $(BIN)/python manage.py makemessages -l zh_Hans -d djangojs $(MAKEMESSAGES_IGNORE) --no-obsolete --add-location=file

$(BIN)/.installed-runtime: requirements.txt pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.12 or newer is needed (Django 6); none found on PATH" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	@# The `judgeboard` command (pyproject.toml), editable: it runs this checkout's code.
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $@

$(BIN)/.installed-dev: $(BIN)/.installed-runtime requirements-dev.txt
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	touch $@

# Development mode, said explicitly: settings default to production (DEBUG=0), and load_demo refuses there.
demo: export DEBUG = 1
demo: $(BIN)/.installed-runtime $(COMPILED)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	@# The Tasks worker (browser imports) runs beside the server and stops with it.
	$(BIN)/python manage.py db_worker --no-reload & worker=$$!; trap 'kill $$worker' EXIT INT TERM; \
		$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

lint: $(BIN)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

test: lint suite

# The tests but the browser's, without the lint (CI lints once, then runs this on each database).
suite: $(BIN)/.installed-dev $(COMPILED)
	$(BIN)/python -m pytest -m "not browser" $(PYTEST_ARGS)

browser-test: $(BIN)/.installed-dev $(COMPILED)
	$(BIN)/python -m pytest -m browser $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache
