"""What users did: labels from behaviour, online metrics, position bias and its correction, the agreement of
offline and online measures, and a click simulator to prove them (pure NumPy/SciPy, no Django)."""
