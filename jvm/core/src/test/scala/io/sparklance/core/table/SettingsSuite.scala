package io.sparklance.core.table

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{FileVersion, InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.commit.{DynamoDbManifestStore, ExternalManifestStore, FileSystemCommitHandler}
import io.sparklance.core.storage.HadoopStorage

class SettingsSuite extends AnyFunSuite {
  private val none = Map.empty[String, String]

  test("an option wins over a table property, which wins over the default; keys are case-insensitive") {
    val table = Map("Max_Rows_Per_File" -> "100", "commit_retries" -> "3")
    assert(WriteSettings(Settings.of(none, table)) == WriteSettings(100, 8L << 20, 8192, 3, None))
    assert(WriteSettings(Settings.of(Map("MAX_ROWS_PER_FILE" -> "7"), table)).maxRowsPerFile == 7)
    assert(WriteSettings.of(none) == WriteSettings(1024L * 1024, 8L << 20, 8192, 20, None))
    assert(ReadSettings(Settings.of(Map("batch_size" -> "64"), Map("rows_per_partition" -> "10"))) == ReadSettings(64, Some(10)))
    assert(ReadSettings(Settings.of(none, none)) == ReadSettings(8192, None))
  }

  test("the other connector's names mean the same; an option under any name wins over a table property") {
    assert(WriteSettings(Settings.of(Map("max_row_per_file" -> "5"), none)).maxRowsPerFile == 5)
    assert(WriteSettings(Settings.of(Map("max_row_per_file" -> "5"), Map("max_rows_per_file" -> "9"))).maxRowsPerFile == 5)
    assert(WriteSettings(Settings.of(Map("batch_size" -> "5"), none)).batchRows == 5)
    assert(WriteSettings(Settings.of(Map("data_storage_version" -> "2.1"), none)).fileVersion.contains(FileVersion.V2_1))
    assert(WriteSettings(Settings.of(Map("file_format_version" -> "stable"), none)).fileVersion.contains(FileVersion.V2_2))
  }

  test("limits cap what a setting can ask for") {
    val w = WriteSettings(Settings.of(Map("batch_rows" -> "99999999", "commit_retries" -> "5000"), none))
    assert(w.batchRows == (1 << 20) && w.commitRetries == 1000)
  }

  test("a bad value names the key and where it was given") {
    val fromTable = intercept[InvalidArgumentException](ReadSettings(Settings.of(none, Map("rows_per_partition" -> "lots"))))
    assert(fromTable.getMessage.contains("Table property rows_per_partition must be a positive number, not 'lots'."))
    val fromOption = intercept[InvalidArgumentException](Settings.of(Map("columnar" -> "maybe"), none).flag(default = true, "columnar"))
    assert(fromOption.getMessage.contains("Option columnar must be true or false, not 'maybe'."))
    val choice = intercept[InvalidArgumentException](Settings.of(Map("invalid_utf8" -> "drop"), none)
      .choice("error", Seq("error", "replace"), "invalid_utf8"))
    assert(choice.getMessage.contains("Option invalid_utf8 must be 'error' or 'replace', not 'drop'."))
    val version = intercept[InvalidArgumentException](WriteSettings(Settings.of(none, Map("file_format_version" -> "3.0"))))
    assert(version.getMessage.contains("Table property file_format_version must be one of 2.0, 2.1, 2.2 (or stable), not '3.0'."))
    val legacy = intercept[UnsupportedFeatureException](WriteSettings(Settings.of(Map("data_storage_version" -> "legacy"), none)))
    assert(legacy.getMessage.contains("legacy Lance file format"))
  }

  test("sparklance settings are checked by key and value on every file system") {
    Table.checkSettings(Map(FileSystemCommitHandler.UnsafeCommits -> "TRUE", HadoopStorage.CoalesceGap -> "-1",
      ExternalManifestStore.Kind -> "dynamodb", DynamoDbManifestStore.TableKey -> "commits"))
    def refused(key: String, value: String): String =
      intercept[io.sparklance.core.InvalidArgumentException](Table.checkSettings(Map(key -> value))).getMessage
    assert(refused(FileSystemCommitHandler.UnsafeCommits, "yes") == "Setting sparklance.commit.unsafe must be true or false, not 'yes'.")
    assert(refused(HadoopStorage.CoalesceGap, "-2").contains("must be a number of bytes"))
    assert(refused(ExternalManifestStore.Kind, "java.lang.String").contains("is not an io.sparklance.core.commit.ExternalManifestStore"))
    assert(refused(ExternalManifestStore.Kind, "no.such.Store").contains("neither 'dynamodb' nor a class"))
    assert(refused(DynamoDbManifestStore.TableKey, " ").contains("must be a non-empty name"))
    val unknown = refused("sparklance.commit.unsafe-ish", "true")
    assert(unknown.contains("Unknown setting sparklance.commit.unsafe-ish") && unknown.contains(HadoopStorage.CoalesceGap))
  }
}
