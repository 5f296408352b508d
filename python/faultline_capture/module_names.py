"""Module paths for recorded ops: forward hooks name forward ops after the innermost module
running; tensor hooks on module outputs name backward ops ``<path>.grad`` from the moment the
gradient of that module's output is known (the module's own backward runs next)."""
import torch


class ModuleNames:
    def __init__(self, model):
        self._stack = []
        self._backward = ""
        self._handles = []
        self._active = True
        for name, module in model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._enter(name)))
            self._handles.append(module.register_forward_hook(self._leave(name)))

    def _enter(self, name):
        def hook(module, inputs):
            self._stack.append(name)
        return hook

    def _leave(self, name):
        def hook(module, inputs, output):
            if self._stack and self._stack[-1] == name:
                self._stack.pop()
            grad_name = name + ".grad" if name else "grad"
            for t in _tensors(output):
                if t.requires_grad and t.grad_fn is not None:
                    t.register_hook(self._backward_hook(grad_name))
        return hook

    def _backward_hook(self, grad_name):
        def hook(grad):
            if self._active:
                self._backward = grad_name
        return hook

    def forward_name(self):
        return self._stack[-1] if self._stack else ""

    def backward_name(self):
        return self._backward

    def remove(self):
        self._active = False
        for h in self._handles:
            h.remove()
        self._handles = []


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)
