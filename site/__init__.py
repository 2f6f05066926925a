"""The static site: a dashboard written from a dataset build, opened from a folder or served as static files.

``ecocompute publish site --dataset DIR --out DIR`` (and ``publish build``, into ``<out>/site``) writes
``index.html`` with the data embedded as columnar JSON, the app's script and style, and the vendored chart
library. Nothing is fetched at view time.
"""
