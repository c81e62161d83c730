"""The text analyzer (:mod:`retrieval.analyzer`): Han, Kana and Hangul runs
as Lucene's CJKAnalyzer bigrams them, every other script as before, the
Snowball stemmers; BM25 on Chinese, Japanese, English and Russian corpora
before and after; the analyzer shared by the question-in-record check."""

import json
import random
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT, check, write
from rag_corpus_check.core.text import nfkc
from rag_corpus_check.inputs import Gold, GoldQuery
from rag_corpus_check.inputs.question_texts import LeakScan
from rag_corpus_check.retrieval import analyzer as analysis
from rag_corpus_check.retrieval.analyzer import CJK, Analyzer, bigrams, tokenize, words
from rag_corpus_check.retrieval.bm25 import BM25Index, BM25Params


def old_words(text: str) -> list[str]:
    """The tokens before CJK bigrams: NFKC, casefold, ``\\w+`` runs."""
    return re.findall(r"\w+", nfkc(text).casefold())


# ---------------------------------------------------------------- tokens


@pytest.mark.parametrize("text, tokens", [
    ("备份保留多久", ["备份", "份保", "保留", "留多", "多久"]),
    ("中", ["中"]),  # a lone character is a unigram
    ("中 文", ["中", "文"]),  # bigrams never cross a space
    ("东京タワーに行く", ["东京", "京タ", "タワ", "ワー", "ーに", "に行", "行く"]),  # scripts mixed in one run
    ("한국어 처리", ["한국", "국어", "처리"]),
    ("abc中文def", ["abc", "中文", "def"]),  # a Latin run and a Han run are two words
    ("2024年", ["2024", "年"]),
    ("iPhone用ケース", ["iphone", "用ケ", "ケー", "ース"]),
    ("ｶﾀｶﾅ", ["カタ", "タカ", "カナ"]),  # half-width katakana folded by NFKC
    ("『学而时习之』，不亦说乎？", ["学而", "而时", "时习", "习之", "不亦", "亦说", "说乎"]),
])
def test_cjk_runs_become_overlapping_bigrams(text, tokens):
    assert tokenize(text) == tokens


def test_bigrams():
    assert bigrams("ab") == ["ab"] and bigrams("abc") == ["ab", "bc"] and bigrams("a") == ["a"]


def test_every_cjk_character_is_a_word_character_only_where_unicode_says_so():
    """An unassigned code point inside a CJK range stays a separator, as ``\\w`` has it."""
    unassigned = "\U0002fffe"
    assert unicodedata.category(unassigned) == "Cn"
    assert tokenize(f"中文{unassigned}日本") == ["中文", "日本"]


def _samples() -> list[str]:
    rnd = random.Random(5)
    out = ["How long are deleted_backups kept?!", "a\x00b\x7fc\td-e.f/g", "", "  ", "ÀB ǅx ﬁle Ⅻ ①",
           "Привет, МИР", "Straße ＡＢＣ １２", "5xx-ошибки API", "\ufdfa", "ελληνικά Ελλάδα", "עברית العربية",
           "हिन्दी ไทยภาษา"]
    out += ["".join(rnd.choice([chr(c) for c in range(128)]) for _ in range(200)) for _ in range(300)]
    cjk = re.compile(f"[{CJK}]")  # (Kangxi radicals and the like are Han after NFKC: left out)
    pool = [chr(c) for c in range(0x20, 0x3000) if not cjk.search(unicodedata.normalize("NFKC", chr(c)))]
    out += ["".join(rnd.choice(pool) for _ in range(100)) for _ in range(300)]
    return out


def test_text_without_cjk_is_split_as_before():
    """Every other script keeps its tokens (so its rankings): ASCII through
    the fast path, the rest through the regular expression."""
    for text in _samples():
        assert words(text) == old_words(text), repr(text)


def test_the_examples_tokens_are_unchanged():
    """The bundled example's corpus and questions: the same tokens as before
    CJK bigrams, so the same rankings."""
    import yaml

    texts = []
    for line in (EXAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        texts.append(rec.get("title", "") + "\n" + rec["text"])
    texts += [q["query"] for q in yaml.safe_load((EXAMPLE / "gold.yaml").read_text(encoding="utf-8"))["queries"]]
    assert len(texts) > 40
    for text in texts:
        assert tokenize(text) == old_words(text)


# ---------------------------------------------------------------- stemmers


def test_porter_stems_as_lucenes_english_analyzer():
    porter = Analyzer(stemmer="porter")
    assert porter.tokens("running runs refunds Refunding") == ["run", "run", "refund", "refund"]
    # Porter's reference code, and Lucene, leave one- and two-letter words alone.
    assert porter.tokens("as is us s") == ["as", "is", "us", "s"]


def test_stop_words_go_before_the_stemmer():
    a = Analyzer(stopwords="english", stemmer="english")
    assert a.tokens("How are the refunds processed") == ["refund", "process"]


def test_russian_snowball():
    ru = Analyzer(stemmer="russian")
    assert ru.tokens("Резервные копии хранятся") == ru.tokens("резервную копию хранить") == ["резервн", "коп", "хран"]
    # CJK bigrams and digits pass through a stemmer unchanged.
    assert ru.tokens("备份 2024") == ["备份", "2024"]


def test_the_schema_lists_every_stemmer_pystemmer_has():
    import Stemmer

    schema = json.loads((ROOT / "check/rag_corpus_check/schemas/config.schema.json").read_text())
    assert schema["properties"]["retriever"]["properties"]["stemmer"]["enum"] == sorted(Stemmer.algorithms()) + [None]


def test_pystemmer_is_imported_only_when_a_stemmer_is_configured():
    code = ("import sys; sys.path.insert(0, 'check');"
            "from rag_corpus_check.retrieval.bm25 import BM25Index, BM25Params;"
            "i = BM25Index(BM25Params()); i.add('d', 'refunds'); i.finish(); i.search('refund');"
            "print('Stemmer' in sys.modules);"
            "i = BM25Index(BM25Params(stemmer='porter')); i.add('d', 'refunds'); i.finish();"
            "print('Stemmer' in sys.modules, i.search('refund'))")
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["False", "True ['d']"]


# ---------------------------------------------------------------- BM25 in each language, before and after


def _search(docs: dict[str, str], question: str, **params) -> list[str]:
    index = BM25Index(BM25Params(**params))
    for doc_id, text in docs.items():
        index.add(doc_id, text)
    return index.finish().search(question, 10)


ZH = {
    "zh-backup": "删除的备份会保留三十天，之后存储节点会永久删除。",
    "zh-refund": "退款将在申请后十四天内处理，在续订前取消订阅的客户会自动获得退款。",
    "zh-keys": "签名密钥可以在管理控制台中轮换，现有令牌在过期前仍然有效。",
    "zh-upload": "上传失败时，索引服务会重试三次，并把剩余的失败报告给值班工程师。",
}
JA = {
    "ja-backup": "削除されたバックアップは三十日間保管され、その後ストレージから完全に消去されます。",
    "ja-refund": "返金は申請から十四日以内に処理されます。更新前に解約した場合は自動的に返金されます。",
    "ja-keys": "署名鍵は管理コンソールからローテーションできます。既存のトークンは期限まで有効です。",
}


@pytest.mark.parametrize("docs, question, relevant", [
    (ZH, "删除的备份保留多久？", "zh-backup"),
    (ZH, "取消订阅后怎么退款？", "zh-refund"),
    (JA, "バックアップの保管期間は？", "ja-backup"),
    (JA, "解約したら返金されますか", "ja-refund"),
], ids=["zh-backup", "zh-refund", "ja-backup", "ja-refund"])
def test_a_question_sharing_only_words_inside_longer_runs_is_answered_at_rank_1(monkeypatch, docs, question,
                                                                                relevant):
    assert _search(docs, question)[0] == relevant
    monkeypatch.setattr(analysis, "words", old_words)  # before: one token per run of text
    assert _search(docs, question) == []


EN = {
    # The answer says "refund" and "processing"; four short pages say "processed".
    "en-refund": "Refund policy: a refund is issued after processing, within 14 days of the request.",
    "en-ship": "Orders are processed by the warehouse.",
    "en-print": "Print jobs are processed in order.",
    "en-mail": "Mail is processed daily.",
    "en-photo": "Photos are processed on upload.",
}


def test_stemming_moves_the_relevant_document_into_the_top_k():
    question = "How are refunds processed?"
    assert len(_search(EN, question, stopwords="english")) == 4 and "en-refund" not in _search(EN, question)
    assert _search(EN, question, stopwords="english", stemmer="porter")[0] == "en-refund"
    assert _search(EN, question, stopwords="english", stemmer="english")[0] == "en-refund"


def test_russian_with_the_snowball_stemmer():
    docs = {"ru-backup": "Удалённые резервные копии хранятся тридцать дней.",
            "ru-refund": "Возврат средств занимает четырнадцать дней.",
            "ru-keys": "Ключи подписи меняются в консоли администратора."}
    question = "Сколько хранить резервную копию?"
    assert _search(docs, question, stopwords="russian") == []
    assert _search(docs, question, stopwords="russian", stemmer="russian") == ["ru-backup"]


def _kb(tmp_path: Path, retriever: str) -> Path:
    root = tmp_path / "kb"
    write(root / "corpus.jsonl", "".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in EN.items()))
    write(root / "gold.yaml", "queries:\n  - query_id: q1\n    query: How are refunds processed?\n"
                              "    relevant: {en-refund: 2}\n")
    write(root / ".rag-corpus-check.yml", f"version: 1\ncorpus: corpus.jsonl\ngold: gold.yaml\nk: 3\n"
                                          f"retriever:\n  stopwords: english\n{retriever}"
                                          "thresholds:\n  R@3: 1\n")
    return root


def test_the_check_with_a_stemmer_passes_where_it_failed_and_records_the_analyzer(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(_kb(tmp_path, ""))
    code, text, results, summary = check(tmp_path, capsys)
    assert code == 1 and results["conventions"]["analyzer"] == {"cjk": "bigrams", "stemmer": None,
                                                                "stopwords": "english"}
    monkeypatch.chdir(_kb(tmp_path / "2", "  stemmer: porter\n"))
    code, text, results, summary = check(tmp_path / "2", capsys)
    assert code == 0, text
    assert results["queries"][0]["values"]["R@3"] == 1
    assert results["conventions"]["analyzer"] == {"cjk": "bigrams", "stemmer": "porter", "stopwords": "english"}
    assert results["run_source"]["stemmer"] == "porter"
    assert "stemmer porter (as Lucene's EnglishAnalyzer)" in summary
    assert "Han, Hiragana, Katakana and Hangul runs as overlapping bigrams" in summary


def test_an_unknown_stemmer_is_a_schema_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(_kb(tmp_path, "  stemmer: klingon\n"))
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2 and "Traceback" not in text
    assert any(p["file"] == ".rag-corpus-check.yml" and p["line"] == 7 for p in results["problems"]), results["problems"]


# ---------------------------------------------------------------- the question-in-record check


def _scan(question: str, record: str, analyzer: Analyzer | None = None) -> list:
    gold = Gold(file="g.yaml", queries={"q1": GoldQuery("q1", 1, {"d1": 2}, {}, text=question)})
    scan = LeakScan.of(gold, analyzer)
    if scan is None:  # no question of at least MIN_TOKENS tokens
        return []
    scan.record("d1", {"text": record}, 1)
    return scan.found


def test_a_chinese_question_copied_inside_a_longer_run_is_found(monkeypatch):
    record = "常见问题：删除的备份会保留多久答案是三十天。"
    assert _scan("删除的备份会保留多久", record) == [("d1", 1, "q1")]
    monkeypatch.setattr(analysis, "words", old_words)  # before: the run was one token, no match
    assert _scan("删除的备份会保留多久", record) == []


def test_the_question_in_record_check_uses_the_configured_stemmer():
    record = "FAQ: how are refunds processed for cancelled subscriptions"
    assert _scan("How is a refund processed", record) == []
    assert _scan("how is refund processing", record, Analyzer(stemmer="porter")) == []
    assert _scan("How are refund processing", record, Analyzer(stopwords="english", stemmer="porter")) == [
        ("d1", 1, "q1")]  # stop words are kept: the configured list is not used


def test_a_chinese_and_japanese_knowledge_base_passes_the_check_it_failed(tmp_path, capsys, monkeypatch):
    """The whole check: every question's document at rank 1 (R@1 = 1) now;
    before bigrams, none retrieved (R@1 = 0)."""
    root = tmp_path / "kb"
    docs = {**ZH, **JA}
    write(root / "corpus.jsonl", "".join(json.dumps({"id": d, "text": t}, ensure_ascii=False) + "\n"
                                         for d, t in docs.items()))
    questions = [("q1", "删除的备份保留多久？", "zh-backup"), ("q2", "取消订阅后怎么退款？", "zh-refund"),
                 ("q3", "バックアップの保管期間は？", "ja-backup"), ("q4", "解約したら返金されますか", "ja-refund")]
    write(root / "gold.yaml", "queries:\n" + "".join(f'  - query_id: {q}\n    query: "{text}"\n    relevant: {{{d}: 2}}\n'
                                                     for q, text, d in questions))
    write(root / ".rag-corpus-check.yml", "version: 1\ncorpus: corpus.jsonl\ngold: gold.yaml\nk: 1\n"
                                          "thresholds:\n  R@1: 1\n")
    monkeypatch.chdir(root)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0, text
    assert [q["values"]["R@1"] for q in results["queries"]] == [1, 1, 1, 1]
    monkeypatch.setattr(analysis, "words", old_words)
    code, text, results, _ = check(tmp_path / "before", capsys)
    assert code == 1 and [q["values"]["R@1"] for q in results["queries"]] == [0, 0, 0, 0]
