# A small HPC Container Maker recipe: the reference the start-up target was set against.
Stage0 += baseimage(image="nvcr.io/nvidia/cuda:10.1-devel-centos7")  # noqa: F821
Stage0 += gnu()  # noqa: F821
Stage0 += python()  # noqa: F821
