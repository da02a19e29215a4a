"""The planning service layer, between the HTTP edge (app/api) and the sizing core
(app/sizing) with its catalog (app/catalog).

Services take typed requests and the catalog and calibration snapshots as arguments, own the
policy a planning answer needs (calibration matching, option choice, price fallbacks, the
model import), build the whole answer, and raise the domain errors of errors.py. They never
read Flask's request or the database themselves, so the CLI and the views share them.
"""
