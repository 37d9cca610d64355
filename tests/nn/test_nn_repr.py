"""Module reprs, recorded from PyTorch 2.13 (``import ember as torch`` prints the same)."""

from __future__ import annotations

import ember as lib
import pytest
from ember import nn

# fmt: off
CASES = {'nn.AdaptiveAvgPool2d((1, 1))': 'AdaptiveAvgPool2d(output_size=(1, 1))',
 'nn.AvgPool2d(2)': 'AvgPool2d(kernel_size=2, stride=2, padding=0)',
 'nn.BatchNorm1d(3, affine=False)': 'BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, '
                                    'track_running_stats=True)',
 'nn.Bilinear(2, 3, 4)': 'Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)',
 'nn.ConstantPad2d(1, 0.5)': 'ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)',
 'nn.Conv1d(2, 4, 3, stride=2)': 'Conv1d(2, 4, kernel_size=(3,), stride=(2,))',
 "nn.Conv2d(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False, padding_mode='reflect')": 'Conv2d(3, '
                                                                                                 '8, '
                                                                                                 'kernel_size=(3, '
                                                                                                 '5), '
                                                                                                 'stride=(2, '
                                                                                                 '2), '
                                                                                                 'padding=(1, '
                                                                                                 '1), '
                                                                                                 'dilation=(2, '
                                                                                                 '2), '
                                                                                                 'bias=False, '
                                                                                                 'padding_mode=reflect)',
 "nn.Conv2d(3, 8, 3, padding='same', groups=1)": 'Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), '
                                                 'padding=same)',
 'nn.ConvTranspose2d(3, 8, 3, stride=2, output_padding=1)': 'ConvTranspose2d(3, 8, kernel_size=(3, 3), '
                                                            'stride=(2, 2), output_padding=(1, 1))',
 'nn.CrossEntropyLoss()': 'CrossEntropyLoss()',
 'nn.Dropout2d()': 'Dropout2d(p=0.5, inplace=False)',
 'nn.ELU()': 'ELU(alpha=1.0)',
 'nn.Embedding(3, 4, padding_idx=0)': 'Embedding(3, 4, padding_idx=0)',
 'nn.Flatten()': 'Flatten(start_dim=1, end_dim=-1)',
 "nn.GELU(approximate='tanh')": "GELU(approximate='tanh')",
 'nn.GRU(2, 3, bidirectional=True)': 'GRU(2, 3, bidirectional=True)',
 'nn.GroupNorm(2, 4)': 'GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)',
 'nn.Hardtanh()': 'Hardtanh(min_val=-1.0, max_val=1.0)',
 'nn.Identity()': 'Identity()',
 'nn.LSTM(3, 4, 2, batch_first=True, dropout=0.5)': 'LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.5)',
 'nn.LayerNorm(4)': 'LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)',
 'nn.LeakyReLU(0.2)': 'LeakyReLU(negative_slope=0.2)',
 'nn.Linear(3, 2, bias=False)': 'Linear(in_features=3, out_features=2, bias=False)',
 'nn.MaxPool2d(3, 2, 1)': 'MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)',
 "nn.ModuleDict({'a': nn.ReLU()})": 'ModuleDict(\n  (a): ReLU()\n)',
 'nn.ModuleList()': 'ModuleList()',
 'nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(1, 1))])': 'ModuleList(\n'
                                                                                                                  '  '
                                                                                                                  '(0-2): '
                                                                                                                  '3 '
                                                                                                                  'x '
                                                                                                                  'Linear(in_features=2, '
                                                                                                                  'out_features=2, '
                                                                                                                  'bias=True)\n'
                                                                                                                  '  '
                                                                                                                  '(3): '
                                                                                                                  'ReLU()\n'
                                                                                                                  '  '
                                                                                                                  '(4): '
                                                                                                                  'Sequential(\n'
                                                                                                                  '    '
                                                                                                                  '(0): '
                                                                                                                  'Linear(in_features=1, '
                                                                                                                  'out_features=1, '
                                                                                                                  'bias=True)\n'
                                                                                                                  '  '
                                                                                                                  ')\n'
                                                                                                                  ')',
 'nn.MultiheadAttention(8, 2)': 'MultiheadAttention(\n'
                                '  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, '
                                'out_features=8, bias=True)\n'
                                ')',
 'nn.PReLU()': 'PReLU(num_parameters=1)',
 "nn.ParameterDict({'w': nn.Parameter(lib.zeros(2))})": 'ParameterDict(  (w): Parameter containing: '
                                                        '[torch.FloatTensor of size 2])',
 'nn.PixelShuffle(2)': 'PixelShuffle(upscale_factor=2)',
 "nn.RNN(2, 3, nonlinearity='relu')": 'RNN(2, 3)',
 'nn.ReflectionPad2d((1, 2, 0, 1))': 'ReflectionPad2d((1, 2, 0, 1))',
 'nn.SiLU()': 'SiLU()',
 'nn.Softmax(dim=1)': 'Softmax(dim=1)',
 'nn.Softplus(beta=2)': 'Softplus(beta=2, threshold=20.0)',
 'nn.Tanh()': 'Tanh()',
 'nn.Threshold(0.1, 20)': 'Threshold(threshold=0.1, value=20)',
 'nn.TransformerEncoderLayer(8, 2, 16)': 'TransformerEncoderLayer(\n'
                                         '  (self_attn): MultiheadAttention(\n'
                                         '    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, '
                                         'out_features=8, bias=True)\n'
                                         '  )\n'
                                         '  (linear1): Linear(in_features=8, out_features=16, bias=True)\n'
                                         '  (dropout): Dropout(p=0.1, inplace=False)\n'
                                         '  (linear2): Linear(in_features=16, out_features=8, bias=True)\n'
                                         '  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True, '
                                         'bias=True)\n'
                                         '  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True, '
                                         'bias=True)\n'
                                         '  (dropout1): Dropout(p=0.1, inplace=False)\n'
                                         '  (dropout2): Dropout(p=0.1, inplace=False)\n'
                                         ')',
 'nn.Unflatten(1, (2, 2))': 'Unflatten(dim=1, unflattened_size=(2, 2))',
 'nn.Upsample(scale_factor=2)': "Upsample(scale_factor=2.0, mode='nearest')",
 'nn.ZeroPad2d(1)': 'ZeroPad2d((1, 1, 1, 1))'}
# fmt: on


@pytest.mark.parametrize("expr", sorted(CASES))
def test_repr(expr: str) -> None:
    assert repr(eval(expr, {"nn": nn, "lib": lib})) == CASES[expr]
