"""A small word-level language model in the shape of pytorch/examples' word_language_model:
the same three model families (RNNModel over LSTM/GRU/RNN_TANH/RNN_RELU, and a
TransformerModel built on nn.Transformer's encoder) and the same ``--onnx-export`` path
(``torch.onnx.export(model, (dummy_input, hidden), path)``). Plain PyTorch code: the test runs
it with ``import torch`` resolving to ember. Instead of a corpus it trains two steps on random
tokens; ``--probe FILE`` saves one input and the model's outputs for the test to compare
against ONNX Runtime."""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
import torch.onnx
from torch import nn


class RNNModel(nn.Module):
    """Embedding, a recurrent stack, a linear decoder to log-probabilities."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (
                weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid),
            )
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    """Sine/cosine position codes added to the embeddings (a buffer)."""

    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[: x.size(0), :])


class TransformerModel(nn.Transformer):
    """An nn.Transformer of which only the encoder runs, with a causal mask."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        nn.init.uniform_(self.input_emb.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = torch.log(torch.tril(torch.ones(len(src), len(src))))
        else:
            self.src_mask = None
        src = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
        output = self.decoder(self.encoder(src, mask=self.src_mask))
        return F.log_softmax(output, dim=-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="LSTM")
    p.add_argument("--bptt", type=int, default=6)
    p.add_argument("--onnx-export", type=str, default="")
    p.add_argument("--probe", type=str, default="")
    args = p.parse_args()
    torch.manual_seed(0)
    ntokens = 30
    if args.model == "Transformer":
        model = TransformerModel(ntokens, 16, 2, 32, 2, 0.2)
    else:
        model = RNNModel(args.model, ntokens, 16, 16, 2, 0.2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(2):  # train a little: the export is of a trained model
        data = torch.randint(0, ntokens, (args.bptt + 1, 4))
        optimizer.zero_grad()
        if args.model == "Transformer":
            output = model(data[:-1]).view(-1, ntokens)
        else:
            output, _ = model(data[:-1], model.init_hidden(4))
        F.nll_loss(output, data[1:].reshape(-1)).backward()
        optimizer.step()

    def export_onnx(path, batch_size, seq_len):
        model.eval()
        dummy_input = torch.LongTensor(seq_len * batch_size).zero_().view(-1, batch_size)
        if args.model == "Transformer":
            torch.onnx.export(model, (dummy_input,), path)
        else:
            hidden = model.init_hidden(batch_size)
            torch.onnx.export(model, (dummy_input, hidden), path)

    if args.onnx_export:
        export_onnx(args.onnx_export, batch_size=1, seq_len=args.bptt)
    if args.probe:
        model.eval()
        tokens = torch.randint(0, ntokens, (args.bptt, 1))
        with torch.no_grad():
            if args.model == "Transformer":
                inputs, outputs = [tokens], [model(tokens)]
            else:
                hidden = model.init_hidden(1)
                hidden = tuple(h + 0.5 for h in hidden) if isinstance(hidden, tuple) else hidden + 0.5
                out, new_hidden = model(tokens, hidden)
                flat = list(hidden) if isinstance(hidden, tuple) else [hidden]
                new_flat = list(new_hidden) if isinstance(new_hidden, tuple) else [new_hidden]
                inputs, outputs = [tokens, *flat], [out, *new_flat]
        np.savez(
            args.probe,
            **{f"in{i}": t.numpy() for i, t in enumerate(inputs)},
            **{f"out{i}": t.numpy() for i, t in enumerate(outputs)},
        )
    print("exported", args.model)


if __name__ == "__main__":
    main()
