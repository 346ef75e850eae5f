"""A word-level language model (an LSTM, or a Transformer with --model Transformer) trained
with truncated backpropagation through time and a hand-written SGD step, in the style of the
classic word_language_model example; the whole model is saved with torch.save(model) and
loaded back to evaluate. The corpus is made up: sentences from a tiny grammar."""
import argparse
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from _report import report


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    SUBJECTS = ["the cat", "a dog", "my friend", "the old man", "she", "he"]
    VERBS = ["sat on", "looked at", "walked to", "found", "liked"]
    OBJECTS = ["the mat", "a tree", "the house", "the river", "a book"]

    def __init__(self, seed=0):
        self.dictionary = Dictionary()
        rng = random.Random(seed)
        self.train = self.tokenize(self.sentences(rng, 300))
        self.valid = self.tokenize(self.sentences(rng, 40))

    def sentences(self, rng, n):
        return [f"{rng.choice(self.SUBJECTS)} {rng.choice(self.VERBS)} "
                f"{rng.choice(self.OBJECTS)} ." for _ in range(n)]

    def tokenize(self, lines):
        ids = []
        for line in lines:
            words = line.split() + ["<eos>"]
            ids.append(torch.tensor([self.dictionary.add_word(w) for w in words],
                                    dtype=torch.int64))
        return torch.cat(ids)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout if nlayers > 1 else 0)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=500):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.2):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers)
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        nn.init.uniform_(self.input_emb.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def evaluate(model, data_source, args, ntokens):
    model.eval()
    total_loss = 0.
    criterion = nn.NLLLoss()
    if args.model != "Transformer":
        hidden = model.init_hidden(args.eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i, args.bptt)
            if args.model == "Transformer":
                output = model(data).view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="LSTM")
    parser.add_argument("--emsize", type=int, default=32)
    parser.add_argument("--nhid", type=int, default=32)
    parser.add_argument("--nlayers", type=int, default=1)
    parser.add_argument("--lr", type=float, default=5)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--bptt", type=int, default=16)
    parser.add_argument("--nhead", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--save", type=str, default="model.pt")
    args = parser.parse_args()
    args.eval_batch_size = 10
    torch.manual_seed(args.seed)
    corpus = Corpus()
    train_data = batchify(corpus.train, 16)
    val_data = batchify(corpus.valid, args.eval_batch_size)
    ntokens = len(corpus.dictionary)
    if args.model == "Transformer":
        model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, 0.1)
    else:
        model = RNNModel(ntokens, args.emsize, args.nhid, args.nlayers, 0.1)
    criterion = nn.NLLLoss()
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        if args.model != "Transformer":
            hidden = model.init_hidden(16)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            data, targets = get_batch(train_data, i, args.bptt)
            model.zero_grad()
            if args.model == "Transformer":
                output = model(data).view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-args.lr)
            losses.append(loss.item())
        val_loss = evaluate(model, val_data, args, ntokens)
        print(f"| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | "
              f"valid ppl {math.exp(val_loss):8.2f}")
        with open(args.save, "wb") as f:
            torch.save(model, f)
    with open(args.save, "rb") as f:
        model = torch.load(f, weights_only=False)
        if args.model in ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]:
            model.rnn.flatten_parameters()
    test_loss = evaluate(model, val_data, args, ntokens)
    report(model, losses, reloaded_loss=test_loss, model_class=type(model).__name__)


if __name__ == "__main__":
    main()
