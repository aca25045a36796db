"""/etc/mlcc/stack.json, the stack manifest stamped into every image: one typed definition.

:mod:`mlcc.stackfile.document` holds the document as frozen classes; the writer
(:mod:`mlcc.render.manifest`) builds them and writes ``to_json()``, the readers (inspect,
diff, verify in :mod:`mlcc.image.stack`, stored results in :mod:`mlcc.results.store`)
read an image's bytes with ``StackManifest.from_json``, which checks them against
``stack.schema.json`` (beside this file) first. A package of its own because both sides
import it: render must not import image, nor image render.
"""

from __future__ import annotations
