"""Renderers: a resolved Stack in, the files of one build variant and its stage graph out.

    rendered = render(stack, fmt="dockerfile")
    rendered.files   # (("Dockerfile", ...), ("mlcc-record", ...), ("stack.json", ...))
    rendered.digest  # sha256 of the build inputs, also the io.mlcc.digest label
    rendered.graph   # the images a build makes: one stage FROM the base
    chain_graph(rendered, base)  # --chain: stack, framework (runtime), benchmark stages

Formats: ``dockerfile`` (Dockerfile), ``script`` (install.sh for bare-metal hosts) and
``singularity`` (Singularity.def for Apptainer). Output is byte-identical for the same
inputs: no timestamps unless SOURCE_DATE_EPOCH asks for one, no unordered iteration.

The names below are the renderer's public result: what the engines and the API import
(``from mlcc.render import ...``); the modules of the package are its own.
"""

from __future__ import annotations

from mlcc.render.chain import chain_graph
from mlcc.render.graph import BASE, BENCHMARK, IMAGE, RUNTIME, SHARED, Bound, Stage, StageGraph
from mlcc.render.manifest import DIGEST_LABEL, with_base_digest
from mlcc.render.openshift import DEFAULT_CLUSTER, ClusterOptions, check_cluster_options, render_openshift
from mlcc.render.openshift.names import object_name
from mlcc.render.plan import DEFAULT_OPTIONS, SOURCE_DATE_EPOCH, Options, Plan
from mlcc.render.variant import FILES, FORMATS, Format, Rendered, gen_command, render, render_dockerfile

__all__ = [
    "BASE",
    "BENCHMARK",
    "DEFAULT_CLUSTER",
    "DEFAULT_OPTIONS",
    "DIGEST_LABEL",
    "FILES",
    "FORMATS",
    "IMAGE",
    "RUNTIME",
    "SHARED",
    "SOURCE_DATE_EPOCH",
    "Bound",
    "ClusterOptions",
    "Format",
    "Options",
    "Plan",
    "Rendered",
    "Stage",
    "StageGraph",
    "chain_graph",
    "check_cluster_options",
    "gen_command",
    "object_name",
    "render",
    "render_dockerfile",
    "render_openshift",
    "with_base_digest",
]
