"""`TorchVersion`: a version string that compares like a version (torch.torch_version).

    ember.__version__ >= "2.0"        # True: 2.13.0 is later than 2.0
    ember.__version__ >= (2, 1)       # tuples compare too, as torch's do
    ember.__version__ == "2.13.0"     # False: the local label "+ember..." makes it later

Comparisons follow PEP 440 (release numbers, then a/b/rc pre-releases, .post, .dev, then the
local label after "+"); a string that is no PEP 440 version is compared as a plain string, as
torch does. `!=` stays str's, as in torch (which defines only the other five). Read next:
version.py.
"""
import re

__all__ = ["TorchVersion"]

_PATTERN = re.compile(r"""v?(?P<release>\d+(?:\.\d+)*)
                          (?:[-_.]?(?P<pre>a|alpha|b|beta|rc|c)[-_.]?(?P<pre_n>\d*))?
                          (?:[-_.]?post[-_.]?(?P<post>\d*))?
                          (?:[-_.]?dev[-_.]?(?P<dev>\d*))?
                          (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?""",
                      re.VERBOSE | re.IGNORECASE)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}
_INF = float("inf")


def _key(text):
    """A tuple ordering versions as PEP 440 does, or None for a non-version string."""
    match = _PATTERN.fullmatch(text.strip())
    if match is None:
        return None
    release = [int(n) for n in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()  # 2.0 == 2.0.0
    pre, post, dev = match["pre"], match["post"], match["dev"]
    # a release with only .devN sorts before its pre-releases; without pre it is the release
    pre_key = ((_PRE_RANK[pre.lower()], int(match["pre_n"] or 0)) if pre else
               ((-1, 0) if dev is not None and post is None else (_INF, 0)))
    post_key = int(post or 0) if post is not None else -1
    dev_key = int(dev or 0) if dev is not None else _INF
    local = tuple((0, int(p)) if p.isdigit() else (-1, p.lower())
                  for p in re.split(r"[-_.]", match["local"])) if match["local"] else ()
    return tuple(release), pre_key, post_key, dev_key, local


class TorchVersion(str):
    """A `str` whose comparisons with strings, tuples and lists of ints are version
    comparisons (torch.torch_version.TorchVersion)."""

    def _compare(self, other, test):
        if isinstance(other, (tuple, list)):
            text = ".".join(str(part) for part in other)
        elif isinstance(other, str):
            text = other
        else:
            return NotImplemented
        mine, theirs = _key(self), _key(text)
        if mine is None or theirs is None:
            # as torch: a plain string comparison with what was given (a tuple fails)
            return test(str(self), other)
        return test(mine, theirs)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    __hash__ = str.__hash__
