"""The thin command line: parse, call one core function, render."""
