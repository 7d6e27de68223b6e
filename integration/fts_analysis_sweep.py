"""Where the JVM's text analysis (jvm/core FtsTokenizer) and pylance 14's differ, letter by letter: every code point
from U+00A0 to U+2FFF that Python calls alphanumeric (and the number forms U+2150-U+218F) is written as the one-token
text "q<letter>", pylance builds an INVERTED index over them (stem=False, stop words kept) with and without ASCII
folding, and each row's token in pylance's dictionary (read with jvm/core InvertedIndex) is compared with the JVM
analysis of its text. Prints the number of differences and writes them to OUT_DIR/differences_<fold|nofold>.json as
[code point, letter, JVM tokens, pylance token].

Usage: python integration/fts_analysis_sweep.py OUT_DIR
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))


def main(out: Path) -> None:
    import lance
    import pyarrow as pa
    from py4j.java_gateway import get_field

    from conftest import start_spark

    spark = start_spark("fts-analysis-sweep", out)
    jvm = spark._jvm
    letters = [chr(c) for c in range(0xA0, 0x3000)
               if (chr(c).isalnum() or 0x2150 <= c < 0x2190) and not 0xD800 <= c < 0xE000]
    texts = ["q" + c for c in letters]
    path = out / "sweep.lance"
    shutil.rmtree(path, ignore_errors=True)
    ds = lance.write_dataset(pa.table({"id": list(range(len(texts))), "text": texts}), str(path))
    for name, params in (("fold", dict(stem=False, remove_stop_words=False)),
                         ("nofold", dict(stem=False, remove_stop_words=False, ascii_folding=False))):
        ds.create_scalar_index("text", "INVERTED", replace=True, **params)
        ds = lance.dataset(str(path))
        uuid = ds.list_indices()[0]["uuid"]
        index = jvm.io.sparklance.core.index.InvertedIndex.open(jvm.io.sparklance.core.storage.HadoopStorage(),
                                                                str(path / "_indices" / uuid), "sweep")
        tokenizer = index.params().tokenizer()
        ours = [list(get_field(tokenizer.tokenize(t), "texts")) for t in texts]
        differences = []
        for p in range(index.partitions().size()):
            part = index.partitions().apply(p)
            for token_id, token in enumerate(part.tokensById()):
                for doc in get_field(part.postingsOf(token_id), "docs"):
                    row = part.rowId(doc)
                    if ours[row] != [token]:
                        differences.append([hex(ord(letters[row])), letters[row], ours[row], token])
        (out / f"differences_{name}.json").write_text(json.dumps(differences, ensure_ascii=False))
        print(f"{name}: {len(texts)} letters, {len(differences)} analysed otherwise than pylance", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
