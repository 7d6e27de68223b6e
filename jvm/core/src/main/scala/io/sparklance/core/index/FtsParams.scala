package io.sparklance.core.index

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.storage.Storage

/**
 * The text analysis parameters of an INVERTED index, as pylance records them: the JSON in the schema metadata
 * `params` of the index's `metadata.lance` (docs/dev/fts-index-format.md §1). Only what [[FtsTokenizer]] implements
 * is accepted; any other setting is refused by name (see [[FtsParams.parse]]).
 */
final case class FtsParams(baseTokenizer: String, language: String, withPosition: Boolean,
    maxTokenLength: Option[Int], lowerCase: Boolean, stem: Boolean, removeStopWords: Boolean,
    customStopWords: Option[Seq[String]], asciiFolding: Boolean) {

  /** The analysis these parameters describe. */
  def tokenizer(): FtsTokenizer = {
    val stopWords = if (!removeStopWords) Set.empty[String]
      else customStopWords.getOrElse(FtsStopWords.of(language).asScala.toSeq).toSet
    val stemmer = if (stem) FtsStemmer.of(language) else FtsStemmer.NONE
    new FtsTokenizer(base, maxTokenLength.getOrElse(0), lowerCase, stemmer, stopWords.asJava, asciiFolding)
  }

  /**
   * The base tokenizer alone, with no filter (no lower-casing, stop words, stemming, folding or length limit): how
   * pylance 14 splits the text of a fuzzy query (measured: `Run` is one edit from `run`, `the` stays a token).
   */
  def splitter(): FtsTokenizer =
    new FtsTokenizer(base, 0, false, FtsStemmer.NONE, java.util.Collections.emptySet[String](), false)

  private def base: FtsTokenizer.Base = baseTokenizer match {
    case "simple" => FtsTokenizer.Base.SIMPLE
    case "whitespace" => FtsTokenizer.Base.WHITESPACE
    case _ => FtsTokenizer.Base.RAW
  }
}

object FtsParams {
  val MetadataFile = "metadata.lance"

  private val BaseTokenizers = Set("simple", "whitespace", "raw")

  /** The languages pylance 14 takes (tantivy's `Language`, spelled as pylance records them). */
  val Languages: Seq[String] = Seq("Arabic", "Danish", "Dutch", "English", "Finnish", "French", "German", "Greek",
    "Hungarian", "Italian", "Norwegian", "Portuguese", "Romanian", "Russian", "Spanish", "Swedish", "Tamil", "Turkish")

  /** The keys of `params` this reader knows; the ngram ones matter to the ngram tokenizer only (refused). */
  private val Known = Set("lance_tokenizer", "base_tokenizer", "language", "with_position", "max_token_length",
    "lower_case", "stem", "remove_stop_words", "custom_stop_words", "ascii_folding", "min_ngram_length",
    "max_ngram_length", "prefix_only", "block_size")

  /** The parameters of the index in `dir`, from its `metadata.lance`. */
  def read(storage: Storage, dir: String, indexName: String): FtsParams = {
    val path = Storage.join(dir, MetadataFile)
    IndexFiles.withReader(storage, path) { reader =>
      import IndexFiles.SchemaMetadata
      val json = reader.schemaMetadataString("params").getOrElse(throw new CorruptFileException(path,
        "its schema metadata has no 'params' (the tokenizer settings of the full-text index)"))
      parse(json, s"full-text index '$indexName'", path)
    }
  }

  /**
   * Parameters from pylance's JSON; `what` names the index in errors, `path` the file it came from. Settings this
   * reader does not implement are refused by name: a `lance_tokenizer` other than `text`, a base tokenizer other
   * than simple, whitespace or raw (ngram, lindera, jieba), a language pylance does not take, stemming in a language
   * [[FtsStemmer]] does not stem (pylance 14 stems with Snowball 3.1.1's algorithms), and any other switch turned on
   * (pylance 14's split_identifiers, split_on_numerics, preserve_original, index_operators).
   */
  def parse(json: String, what: String, path: String): FtsParams = {
    val node: JsonNode =
      try new ObjectMapper().readTree(json)
      catch { case e: java.io.IOException => throw new CorruptFileException(path, s"its 'params' is not JSON: ${e.getMessage}") }
    def text(key: String, default: String): String =
      Option(node.get(key)).filterNot(_.isNull).map(_.asText()).getOrElse(default)
    def flag(key: String, default: Boolean): Boolean =
      Option(node.get(key)).filterNot(_.isNull).map(_.asBoolean()).getOrElse(default)
    val lanceTokenizer = text("lance_tokenizer", "text")
    if (lanceTokenizer != "text") {
      throw new UnsupportedFeatureException(s"$what uses lance_tokenizer '$lanceTokenizer' (documents parsed as " +
        "JSON), which sparklance's full-text search does not implement; only 'text' is supported. Search it with pylance.")
    }
    // Settings pylance 14 records that change the analysis when true (identifier and number splitting, keeping the
    // original token beside its filtered form, operator tokens); off by default, and not implemented here.
    node.fieldNames().asScala.filterNot(Known.contains).filter(k => node.get(k).isBoolean && node.get(k).asBoolean())
      .toSeq.sorted.foreach { k =>
        throw new UnsupportedFeatureException(s"$what is built with $k = true, which sparklance's full-text search " +
          "does not implement. Search it with pylance, or rebuild the index without it.")
      }
    val base = text("base_tokenizer", "simple")
    if (!BaseTokenizers.contains(base)) {
      throw new UnsupportedFeatureException(s"$what uses base_tokenizer '$base', which sparklance's full-text search " +
        s"does not implement (it implements ${BaseTokenizers.toSeq.sorted.mkString(", ")}). Search it with pylance.")
    }
    val maxLength = Option(node.get("max_token_length")).filterNot(_.isNull).map(_.asInt())
    val custom = Option(node.get("custom_stop_words")).filterNot(_.isNull).map(_.elements().asScala.map(_.asText()).toSeq)
    val p = FtsParams(base, text("language", "English"), flag("with_position", default = false), maxLength,
      flag("lower_case", default = true), flag("stem", default = true), flag("remove_stop_words", default = true),
      custom, flag("ascii_folding", default = true))
    if (!Languages.contains(p.language)) {
      throw new UnsupportedFeatureException(s"$what is built with language '${p.language}', which pylance 14 does " +
        s"not take; the languages are ${Languages.mkString(", ")} (spelled so).")
    }
    if (p.stem && !FtsStemmer.supports(p.language)) {
      throw new UnsupportedFeatureException(s"$what is built with stem = true and language '${p.language}': " +
        s"sparklance's full-text search does not stem ${p.language} as pylance 14 does (Snowball 3.1.1's algorithm); " +
        s"it stems ${FtsStemmer.LANGUAGES.asScala.mkString(", ")}. Search it with pylance, or rebuild the index " +
        "with stem = false.")
    }
    p
  }
}
