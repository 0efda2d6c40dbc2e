"""Sweeps after they run: the comparison of their trials (`tftrain compare`).

The sweep itself is stack config (`infra.config.sweep`); its trials are ordinary runs, which
the program, the render and the local launcher build like any other.
"""
