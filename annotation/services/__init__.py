"""Every write to the annotation domain goes through a function here, each in one transaction."""
