"""Markdown renderings (GitHub-flavoured tables)."""

from __future__ import annotations


def cell(v) -> str:
    """One table cell: pipes escaped, line breaks flattened, None empty."""
    if v is None:
        return ""
    return str(v).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def table(headers: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _families(d: dict) -> str:
    return ", ".join(f"{f} ×{n}" for f, n in d.items()) or "—"


def kernel_view(view: dict, title: str | None = None) -> str:
    """The kernel view as Markdown: title, verdict, kernel table, summaries by ISA family and by kind."""
    b, c = view["baseline_name"], view["candidate_name"]
    flt = view.get("filter_op")
    if title is None:
        what = "GEMM/IGEMM kernel view" if flt and flt.lower() == "gemm" else "Kernel view"
        title = f"{b} vs {c}: {what} (XNNPACK delegated)" + (f", kernels matching '{flt}'" if flt and flt.lower() != "gemm" else "")
    out = [f"#### **{cell(title)}**", "", f"**Verdict:** {view['verdict']}", ""]
    if view["kernels"]:
        rows = [[f"`{k['kernel_name']}`", "✅ registered" if k["baseline"] else "❌ absent",
                 "✅ registered" if k["candidate"] else "❌ absent", k["isa_family"], k["isa"] or "?", k["category"],
                 (k["kleidiai_kernel"] or "yes") if k["kleidiai"] else ""]
                for k in view["kernels"]]
        out.append(table(["Kernel", b, c, "ISA family", "ISA", "Kind", "KleidiAI"], rows))
        out += ["##### By ISA family (kernels registered)", ""]
        out.append(table(["ISA family", b, c], [[f["family"], f["baseline"], f["candidate"]] for f in view["by_family"]]))
        out += ["##### By kind", ""]
        out.append(table(["Kind", b, c], [[k["kind"], _families(k["baseline"]), _families(k["candidate"])]
                                          for k in view["by_kind"]]))
    else:
        out += ["No kernels found matching the filter criteria.", ""]
    out += [f"_{view['note']}_", ""]
    return "\n".join(out)
