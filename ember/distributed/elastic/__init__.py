"""ember.distributed.elastic: the part of torch.distributed.elastic that training scripts
import -- `multiprocessing.errors.record`. ember's launcher is not elastic (no restarts, no
rendezvous of its own): see ember/distributed/run.py."""
