"""`sdd init` as a person command. The door to writing her record (person_write,
refuse_inside_run) lives in sdd_git.sink, below roles and records."""

from __future__ import annotations

from pathlib import Path

from sdd_git.root import InitReport, Root


def init(folder: Path, product: str | None) -> InitReport:
    """`sdd init`: the layout (root.init_root), and the settings and product file it wrote are
    hers in her trust ledger. Files that were there already (a clone's) stay as they were:
    init confirms nothing it did not write."""
    from sdd_git.errors import RecordError
    from sdd_git.root import init_root
    from sdd_git.trust import pending

    product_file = Root(folder.resolve()).product
    product_existed = product_file.is_file()
    try:
        product_before = (
            pending.yaml_surface(product_file, product_file.parents[1]) if product_existed else None
        )
    except RecordError:
        product_before = None
    report = init_root(folder, product)
    made = set(report.created)
    if ".sdd/config.yaml" in made:
        pending.record_settings(report.root, None, "sdd init", existed=False)
    if "memory/product.yaml" in made:
        pending.record_product(report.root, None, "sdd init", existed=False)
    elif product is not None and product_existed:
        pending.record_product(report.root, product_before, "sdd init --product", existed=True)
    return report
