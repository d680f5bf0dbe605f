"""`--cex-svg DIR`: one hand-written SVG per refuted race (plain XML, no dependencies).

Two horizontal lanes, one per thread, time from left to right: the earlier access on the first
lane, the later one on the second, the sync statements that ran between them as grey bars across
both lanes, the place of the missing synchronization as a red bar, and the missing
happens-before edge as a dashed red arrow from the earlier access to the later one.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import escape

from verifier.report.cex_view import CexView, view
from verifier.results import ProcResult

LEFT, RIGHT, LABEL_W, STEP = 30, 40, 230, 200
LANE_Y = (150, 270)
_RED, _GREY, _INK, _BLUE = "#c62828", "#757575", "#212121", "#1565c0"


def _text(x: float, y: float, body: str, size: int = 13, anchor: str = "start",
          fill: str = _INK, weight: str = "normal") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-family="DejaVu Sans, Helvetica, Arial, '
            f'sans-serif" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
            f'font-weight="{weight}">{escape(body)}</text>')


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 3] + "..."


def svg(v: CexView) -> str:
    x0 = LEFT + LABEL_W
    xs = [x0 + 70 + STEP * i for i in range(len(v.events))]
    width = max(900, xs[-1] + 70 + RIGHT)
    top, bottom = LANE_Y[0] - 45, LANE_Y[1] + 45
    height = bottom + 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}">',
           f'<title>{escape(v.title)}</title>',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
           f'markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
           f'fill="{_RED}"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           _text(LEFT, 30, v.title, 16, weight="bold"),
           _text(LEFT, 52, f"counterexample replayed on the abstract machine at sizes {v.sizes}",
                 12, fill=_GREY)]
    for lane, y in zip(v.lanes, LANE_Y):
        role, _, rest = lane.partition(": ")
        who, _, its = rest.partition(" (")
        out.append(f'<line x1="{x0}" y1="{y}" x2="{width - RIGHT}" y2="{y}" '
                   f'stroke="{_INK}" stroke-width="2"/>')
        out.append(_text(LEFT, y - 8, f"{role} access thread", 13, weight="bold"))
        out.append(_text(LEFT, y + 10, who, 12))
        if its:
            out.append(_text(LEFT, y + 27, _clip("(" + its, 40), 11, fill=_GREY))
    ends = []
    for x, e in zip(xs, v.events):
        if e.lane is None:
            missing = e.kind == "missing"
            colour = _RED if missing else _GREY
            dash = ' stroke-dasharray="6 4"' if missing else ""
            out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="{colour}" '
                       f'stroke-width="3"{dash}/>')
            if missing:
                out.append(_text(x, top - 22, "missing sync goes here", 12, "middle", colour,
                                 "bold"))
                out.append(_text(x, top - 7, f"(before line {e.loc.line})", 11, "middle",
                                 colour))
            else:
                out.append(_text(x, bottom + 18, f"line {e.loc.line}: did not order them", 11,
                                 "middle", colour))
                out.append(_text(x, bottom + 34, _clip(e.text, 38), 10, "middle", colour))
            continue
        y = LANE_Y[e.lane]
        ends.append((x, y))
        out.append(f'<circle cx="{x}" cy="{y}" r="9" fill="{_BLUE}"/>')
        label_y, line_y = (y - 16, y + 26) if e.lane == 0 else (y + 28, y + 44)
        out.append(_text(x, label_y, e.text, 13, "middle", _BLUE, "bold"))
        out.append(_text(x, line_y, f"line {e.loc.line}", 11, "middle", _GREY))
    if len(ends) == 2:
        (x1, y1), (x2, y2) = ends
        out.append(f'<path d="M {x1 + 7} {y1 + 7} C {x1 + 90} {y1 + 70}, {x2 - 90} {y2 - 70}, '
                   f'{x2 - 8} {y2 - 8}" fill="none" stroke="{_RED}" stroke-width="2.5" '
                   'stroke-dasharray="8 5" marker-end="url(#arrow)"/>')
        # between the earlier access and the next event, so no bar crosses the label
        out.append(_text((xs[0] + xs[1]) / 2, (y1 + y2) / 2 + 26, "missing happens-before edge",
                         11, "middle", _RED, "bold"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _name(r: ProcResult, index: int, kind: str, line: int) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{r.proc}-{index}-{kind}-L{line}")
    return f"{stem}.svg"


def write_cex_svgs(results: list[ProcResult], folder: str) -> list[Path]:
    """One picture per race finding with a counterexample; the paths written."""
    out_dir = Path(folder)
    written = []
    for r in results:
        for i, f in enumerate(r.findings):
            v = view(f)
            if v is None:
                continue
            path = out_dir / _name(r, i, f.kind.value, f.loc.line)
            path.write_text(svg(v), encoding="utf-8")
            written.append(path)
    return written


__all__ = ["svg", "write_cex_svgs"]
