"""The package's one compiled part: edgeprof._core, the ETDump walk in C. It is optional — where it does not build
(no compiler), the install still succeeds and edgeprof reads with numpy (edgeprof.io.etdump_core says which)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "edgeprof._core",
    sources=["src/edgeprof/_core.c", "src/edgeprof/_core_walk.c", "src/edgeprof/_core_text.c"],
    depends=["src/edgeprof/_core_walk.h", "src/edgeprof/_core_text.h"],
    extra_compile_args=["-O2", "-std=c99"],
    optional=True,
)])
