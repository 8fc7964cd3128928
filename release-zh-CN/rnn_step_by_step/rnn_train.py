"""Watch it learn: train your own RNN and LSTM on a task that needs a long memory.

Nothing here is graded. The forward and backward passes are yours (passed in as
arguments); this module adds what a framework would: a task to learn, a loss on the last
step's prediction, an optimizer (Adam) and a plot; the gradient check uses rnn_utils.
Numpy only; matplotlib only to plot.

The task, "recall the first symbol": each sequence starts with one of ``n_symbols``
symbols, marked by a start flag, followed by ``T - 1`` random symbols of the same kind
that only distract. After the last step the network must say which symbol came first.
Guessing gives 1 / n_symbols; doing better means carrying the first symbol's identity
through every later step.
"""
import os
import time

import numpy as np

from rnn_utils import numerical_gradient, relative_error

LSTM_GATES = ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo")


def grading():
    """True while an autograder runs the notebook (nbgrader sets NBGRADER_EXECUTION)."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def recall_task(rng, n_symbols, T, m):
    """A batch of the task: inputs x (n_symbols + 1, m, T) and the answers (m,)."""
    symbols = rng.integers(0, n_symbols, size=(m, T))
    x = np.zeros((n_symbols + 1, m, T))
    x[symbols, np.arange(m)[:, None], np.arange(T)[None, :]] = 1.0
    x[n_symbols, :, 0] = 1.0          # the start flag
    return x, symbols[:, 0]


def init_parameters(kind, n_x, n_a, n_y, rng, forget_bias=3.0):
    """Small random weights. The LSTM's forget gate starts mostly open (sigmoid(3) = 0.95):
    its memory lasts from the start, and training teaches it what to keep; started near
    0.5, the memory of step 0 would be halved at every step and gone long before step 39."""
    def w(rows, cols):
        return rng.normal(0, 1 / np.sqrt(cols), size=(rows, cols))
    if kind == "rnn":
        return {"Wax": w(n_a, n_x), "Waa": w(n_a, n_a), "ba": np.zeros((n_a, 1)),
                "Wya": w(n_y, n_a), "by": np.zeros((n_y, 1))}
    p = {name: w(n_a, n_a + n_x) for name in ("Wf", "Wi", "Wc", "Wo")}
    p.update({name: np.zeros((n_a, 1)) for name in ("bi", "bc", "bo")}, bf=np.full((n_a, 1), forget_bias))
    p.update(Wy=w(n_y, n_a), by=np.zeros((n_y, 1)))
    return p


def last_step_loss(forward, x, a0, parameters, answers, kind):
    """Cross-entropy of the last step's prediction, and the gradients your backward pass
    needs: ``da`` (zero except at the last step) and those of the output layer."""
    out = forward(x, a0, parameters)
    a, y, caches = out[0], out[1], out[-1]
    m = x.shape[1]
    probs = y[:, :, -1]
    loss = -np.mean(np.log(probs[answers, np.arange(m)] + 1e-12))
    dlogits = probs.copy()
    dlogits[answers, np.arange(m)] -= 1
    dlogits /= m
    W_out = "Wya" if kind == "rnn" else "Wy"
    da = np.zeros_like(a)
    da[:, :, -1] = parameters[W_out].T @ dlogits
    output_grads = {"d" + W_out: dlogits @ a[:, :, -1].T, "dby": dlogits.sum(axis=1, keepdims=True)}
    accuracy = float(np.mean(probs.argmax(axis=0) == answers))
    return loss, accuracy, da, caches, output_grads


class Adam:
    """Adam (Kingma and Ba, 2015): each weight takes steps of about ``lr``, scaled down
    where its gradient is noisy. ``step`` updates the parameters in place."""

    def __init__(self, parameters, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8):
        self.parameters, self.lr, self.beta1, self.beta2, self.eps = parameters, lr, beta1, beta2, eps
        self.m = {k: np.zeros_like(v) for k, v in parameters.items()}
        self.v = {k: np.zeros_like(v) for k, v in parameters.items()}
        self.t = 0

    def step(self, grads):
        self.t += 1
        for k, p in self.parameters.items():
            g = grads["d" + k]
            self.m[k] = self.beta1 * self.m[k] + (1 - self.beta1) * g
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * g * g
            m_hat = self.m[k] / (1 - self.beta1 ** self.t)
            v_hat = self.v[k] / (1 - self.beta2 ** self.t)
            p -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def _gradients(kind, forward, backward, x, a0, parameters, answers):
    loss, accuracy, da, caches, grads = last_step_loss(forward, x, a0, parameters, answers, kind)
    grads.update(backward(da, caches))
    return loss, accuracy, grads


def gradient_problem(kind, forward, backward, seed=0):
    """None when your backward pass agrees with a numerical gradient of the loss through
    your forward pass on a tiny problem; otherwise a sentence saying where it does not."""
    rng = np.random.default_rng(seed)
    n_symbols, n_a, T, m = 3, 4, 4, 3
    x, answers = recall_task(rng, n_symbols, T, m)
    a0 = np.zeros((n_a, m))
    parameters = init_parameters(kind, n_symbols + 1, n_a, n_symbols, rng)
    for p in parameters.values():   # biases too, so that no gradient is zero by accident
        p += rng.normal(0, 0.5, size=p.shape)
    _, _, grads = _gradients(kind, forward, backward, x, a0, parameters, answers)
    names = ("Wax", "Waa", "ba") if kind == "rnn" else LSTM_GATES
    for name in names:
        if "d" + name not in grads:
            return f"它没有返回 d{name}"
        got, target = np.asarray(grads["d" + name]), parameters[name]
        if got.shape != target.shape:
            return f"d{name} 的形状是 {got.shape}，而 {name} 的形状是 {target.shape}"
        numeric = numerical_gradient(lambda: last_step_loss(forward, x, a0, parameters, answers, kind)[0], target, 1.0)
        error = relative_error(got, numeric)
        if error > 1e-6:
            return (f"d{name} 与损失的数值梯度不一致（相对误差 {error:.1e}，而正确的反向传播给出 1e-8 或更小）")
    return None


def train(kind, forward, backward, T=40, n_symbols=4, n_a=16, m=64, steps=800, lr=0.005, seed=1,
          forget_bias=3.0, report_every=200):
    """Train one network with your functions and Adam; return its history of training
    accuracy (one value per step), or None, having said why, when it cannot train."""
    label = kind.upper()
    if grading():
        print(f"{label}：评分期间不训练（训练是可选的，不计分）。")
        return None
    try:
        problem = gradient_problem(kind, forward, backward)
    except NotImplementedError:
        print(f"{label}：没有训练：请先写好 {forward.__name__} 和 {backward.__name__}（以及它们调用的单元函数，如 rnn_cell_forward）。")
        return None
    except Exception as exc:
        print(f"{label}：没有训练：你的函数抛出了 {type(exc).__name__}：{exc}。上面的检查单元格会告诉你要改什么。")
        return None
    if problem:
        print(f"{label}：没有训练，因为它学不会：{problem}。请先修正 {backward.__name__}（它的检查单元格会说明哪里不对）。")
        return None
    rng = np.random.default_rng(seed)
    parameters = init_parameters(kind, n_symbols + 1, n_a, n_symbols, rng, forget_bias)
    optimizer = Adam(parameters, lr=lr)
    a0 = np.zeros((n_a, m))
    history, start = [], time.perf_counter()
    for step in range(1, steps + 1):
        x, answers = recall_task(rng, n_symbols, T, m)
        loss, accuracy, grads = _gradients(kind, forward, backward, x, a0, parameters, answers)
        for g in grads.values():                # keep one unlucky step from throwing it off
            np.clip(g, -5, 5, out=g)
        optimizer.step(grads)
        history.append(accuracy)
        if step % report_every == 0 or step == steps:
            recent = np.mean(history[-report_every:])
            print(f"{label} 第 {step:4d} 步：损失 {loss:.3f}，最近 {report_every} 个批次的准确率 {recent:.0%}   （{time.perf_counter() - start:.1f} 秒）")
    return history


def plot(histories, n_symbols=4, window=20):
    """Training accuracy of each network, smoothed over ``window`` steps."""
    histories = {k: v for k, v in histories.items() if v}
    if not histories:
        return
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print("（没有安装 matplotlib：不画图，不过上面的数字已经说明了结果）")
        return
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for (name, history), color in zip(histories.items(), ("#c62828", "#1565c0")):
        smooth = np.convolve(history, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, len(history) + 1), smooth, color=color, lw=2, label=name)
    steps = max(len(h) for h in histories.values())
    ax.axhline(1 / n_symbols, color="#5f6368", ls="--", lw=1)
    ax.text(steps, 1 / n_symbols - 0.04, *_label(f"瞎猜：{n_symbols} 选 1", f"guessing: 1 in {n_symbols}"), color="#5f6368", ha="right", va="top")
    ax.set_xlabel(*_label("训练步数", "training step"))
    ax.set_ylabel(*_label("训练批次上的准确率", "accuracy on the training batches"))
    ax.set_ylim(0, 1.05)
    ax.set_title(*_label("回忆序列的第一个符号", "Recalling the first symbol of a sequence"))
    ax.legend(loc="center right")
    fig.tight_layout()
    plt.show()


import os
import re

_FONT: dict = {}
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN", "WenQuanYi Zen Hei",
                "WenQuanYi Micro Hei", "Microsoft YaHei", "SimHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC",
                "Noto Sans CJK JP", "Droid Sans Fallback", "Arial Unicode MS")
FILE_HINT = re.compile(r"cjk|sans ?sc|hans|wqy|yahei|msyh|simhei|pingfang|hiragino|heiti|droidsansfallback|unicode", re.I)


def _label_font():
    """(family, file) of an installed CJK font for matplotlib to fall back on; None if none is
    installed, or if matplotlib is older than 3.6 (it has no fallback between fonts)."""
    import matplotlib
    from matplotlib import font_manager
    if tuple(int(p) for p in matplotlib.__version__.split(".")[:2] if p.isdigit()) < (3, 6):
        return None
    installed = {f.name: f.fname for f in font_manager.fontManager.ttflist if os.path.isfile(f.fname)}
    if not installed.keys() & set(CJK_FAMILIES):
        # matplotlib's font list is a cache, written before a font installed since was there
        for path in font_manager.findSystemFonts():
            if FILE_HINT.search(os.path.basename(path)):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        installed = {f.name: f.fname for f in font_manager.fontManager.ttflist if os.path.isfile(f.fname)}
    for name in CJK_FAMILIES:
        if name in installed:
            return name, installed[name]
    return None


def _label(text, english):
    """A plot label's words and its font (``fontdict``): ``text``, with an installed CJK font
    to fall back on, when that font can draw every character of it; else ``english``."""
    if all(ord(c) < 0x2E80 for c in text):
        return text, None
    if "font" not in _FONT:
        _FONT["font"] = _label_font()
    if _FONT["font"] is not None:
        import matplotlib
        from matplotlib.ft2font import FT2Font
        name, path = _FONT["font"]
        drawn = FT2Font(path).get_charmap()
        if all(ord(c) in drawn for c in text if not c.isspace()):
            return text, {"family": [*matplotlib.rcParams["font.family"], name]}
    if not _FONT.get("said"):
        _FONT["said"] = True
        print("（这台电脑上没有能显示中文的字体，所以图中的文字用英文。安装一种中文字体（例如 Noto Sans CJK SC）后重启内核即可。）")
    return english, None
