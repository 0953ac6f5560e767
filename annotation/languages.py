"""The languages of the pages: where a signed-in person's choice is kept for their requests. The choice
itself is `Profile.language` (`models/people.py`); `settings.LANGUAGES` lists what may be chosen."""

# The session key holding a signed-in person's language, read by `config.middleware.LanguageMiddleware`:
# put there at sign-in from their profile and by the language switcher, so no request reads the profile.
SESSION_LANGUAGE = "language"
