"""Draw the forward graph f and the backward graph df of a small RNN's loss side by side as one
SVG picture: the values f saves for df highlighted and joined by dashed edges, the Python loop
a cluster in each (it is differentiated as a loop, not unrolled).

    python examples/draw_gradient.py [OUTPUT.svg]

Rendering needs Graphviz's `dot` program; without it the DOT text is written instead.
"""

import sys

import numpy as np

import autodiff as ad
from ir.dot import try_render_svg


def rnn_loss(w_h, w_x, xs, target):
    """Squared error of the last hidden state of a tanh RNN run over the rows of xs."""
    h = np.zeros(w_h.shape[0])
    for x in xs:
        h = np.tanh(w_h @ h + w_x @ x)
    return np.sum((h - target) ** 2)


def numerical_grad(f, w, eps=1e-6):
    """Central differences of the scalar function f at the array w."""
    grad = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[i] = eps
        grad[i] = (f(w + step) - f(w - step)) / (2 * eps)
    return grad


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    w_h, w_x = 0.5 * rng.standard_normal((4, 4)), rng.standard_normal((4, 3))
    xs, target = rng.standard_normal((6, 3)), rng.standard_normal(4)

    dloss = ad.grad(rnn_loss)
    dw_h = dloss(w_h, w_x, xs, target)
    print("d loss / d w_h =")
    print(np.array2string(dw_h, precision=4))
    numeric = numerical_grad(lambda w: rnn_loss(w, w_x, xs, target), w_h)
    error = np.max(np.abs(dw_h - numeric))
    verdict = "passed" if error < 1e-6 else "FAILED"
    print(f"gradient check: max abs error {error:.1e} vs central differences: {verdict}")

    gradient = dloss.gradient_for(w_h, w_x, xs, target)  # the f and df that call ran
    dot_text = gradient.to_dot()
    svg = try_render_svg(dot_text)  # None when Graphviz is not installed
    output = sys.argv[1] if len(sys.argv) > 1 else "rnn_gradient.svg"
    if svg is None:
        output = output.removesuffix(".svg") + ".dot"
        print("Graphviz's dot program was not found; writing the DOT text instead")
    with open(output, "w", encoding="utf-8") as file:
        file.write(dot_text if svg is None else svg)
    print(f"wrote {output}: f and df side by side")
    sys.exit(0 if verdict == "passed" else 1)
