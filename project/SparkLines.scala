/**
 * A Spark line the connector is built for: its runtime jar `io.sparklance:sparklance-spark-<line>_<scala>` is
 * jvm/spark/src/main/scala plus the shim directories `jvm/spark/src/main/scala-spark-<range>` whose range covers the
 * line (docs/dev/spark-lines.md).
 */
case class SparkLine(line: String, scalaV: String, spark: String, shims: Seq[String]) {
  def scalaBinary: String = scalaV.split('.').take(2).mkString(".")
  def artifact: String = s"sparklance-spark-${line}_$scalaBinary"
  /** The sbt project: spark34_212, spark35_213, spark40, ... (Spark 4 is built for Scala 2.13 only). */
  def projectId: String =
    s"spark${line.replace(".", "")}" + (if (line.startsWith("3.")) "_" + scalaBinary.replace(".", "") else "")
}

object SparkLine {
  // Scala 2.13 for Spark 4 and the _2.13 builds of Spark 3.4/3.5; 2.12 for Spark 3.4/3.5's default builds, at the
  // oldest 2.12 library a supported Spark ships (3.4's), so that nothing newer is called.
  val scala213 = "2.13.18"
  val scala212 = "2.12.17"

  // Each range directory holds the shims of the lines it names (docs/dev/spark-lines.md).
  private def shims(line: String): Seq[String] = line match {
    case "3.4" => Seq("3.4", "3.4-3.5", "3.4-4.0")
    case "3.5" => Seq("3.4-3.5", "3.4-4.0", "3.5-4.3")
    case "4.0" => Seq("3.4-4.0", "3.5-4.3", "4.0", "4.0-4.3")
    case "4.1" | "4.2" => Seq("3.5-4.3", "4.0-4.3", "4.1-4.2", "4.1-4.3")
    case "4.3" => Seq("3.5-4.3", "4.0-4.3", "4.1-4.3", "4.3")
  }
  private def line(l: String, scalaV: String, spark: String) = SparkLine(l, scalaV, spark, shims(l))
  val all: Seq[SparkLine] = Seq(
    line("3.4", scala212, "3.4.4"),
    line("3.4", scala213, "3.4.3"), // 3.4.4's _2.13 modules are not all on Maven Central
    line("3.5", scala212, "3.5.9"),
    line("3.5", scala213, "3.5.9"),
    line("4.0", scala213, "4.0.4"),
    line("4.1", scala213, "4.1.3"),
    line("4.2", scala213, "4.2.0"),
    line("4.3", scala213, "4.3.0"),
  )
  def apply(projectId: String): SparkLine = all.find(_.projectId == projectId).get
}
