"""brrr.tf32 on the installed PyTorch (its switches work without a GPU): read, set and restore
TF32 for matmuls and convolutions through either of PyTorch's APIs, never raising on a mix."""
import pytest

torch = pytest.importorskip("torch")

from brrr import tf32  # noqa: E402


@pytest.fixture(autouse=True)
def restore():
    matmul, conv = torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision
    yield
    torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision = matmul, conv


def test_pytorch_defaults():
    assert not tf32.enabled(torch, "matmul")   # cuBLAS: IEEE float32 unless asked
    assert tf32.enabled(torch, "conv")         # cuDNN: TF32 unless asked not to


@pytest.mark.parametrize("kind", ["matmul", "conv"])
@pytest.mark.parametrize("on", [True, False])
def test_setting_is_seen_inside_and_restored_after(kind, on):
    before = tf32.enabled(torch, kind)
    with tf32.setting(torch, kind, on):
        assert tf32.enabled(torch, kind) is on
    assert tf32.enabled(torch, kind) is before


def test_reading_after_the_new_api_was_used_does_not_raise():
    torch.backends.cuda.matmul.fp32_precision = "tf32"   # the API PyTorch now recommends
    with pytest.raises(RuntimeError):
        torch.backends.cuda.matmul.allow_tf32            # the old flag refuses to answer
    assert tf32.enabled(torch, "matmul")
    with tf32.setting(torch, "matmul", False):
        assert not tf32.enabled(torch, "matmul")
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"


def test_the_old_flag_is_still_understood():
    torch.backends.cuda.matmul.allow_tf32 = True
    assert tf32.enabled(torch, "matmul")


def test_a_bad_kind_is_named():
    with pytest.raises(ValueError, match="kind must be one of"):
        tf32.enabled(torch, "attention")


def test_the_profiler_judges_float32_convolutions_by_the_tf32_roof_cudnn_uses(monkeypatch):
    from types import SimpleNamespace
    from brrr.profiler import regimes
    asked = []
    monkeypatch.setattr(regimes.Roofline, "from_device", lambda dev, dtype, tc: asked.append((dtype, tc)) or tc)
    gpu = SimpleNamespace(on_gpu=True)

    def roof(op, dtype="float32", category="matmul"):
        return regimes._roofline_for(gpu, dtype, category, {}, op)

    assert roof("convolution") is True          # cuDNN's default: TF32
    assert roof("mm") is False                  # cuBLAS's default: IEEE float32
    assert roof("add", category="pointwise") is False
    with tf32.setting(torch, "conv", False):
        assert roof("convolution") is False
    with tf32.setting(torch, "matmul", True):
        assert roof("addmm") is True
    assert roof("mm", dtype="bfloat16") is True
    assert regimes._roofline_for(SimpleNamespace(on_gpu=False), "float32", "matmul", {}, "convolution") is False
