package io.sparklance.cli

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.google.protobuf.{Any => ProtoAny}
import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.LanceException
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.proto.Encodings21Protos

/**
 * `sparklance dump-file PATH [--rows N] [--columns a,b] [--layouts]`: a Lance data file's version, schema and page layouts
 * (in full with `--layouts`),
 * and its first rows as read by the JVM reader.
 */
object DumpFile {

  def main(argv: Array[String]): Unit = sys.exit(run(argv.toSeq))

  def run(argv: Seq[String]): Int = {
    if (argv.isEmpty) {
      System.err.println("usage: sparklance dump-file PATH [--rows N] [--columns a,b] [--layouts]")
      return 2
    }
    val path = argv.head
    val rows = argv.sliding(2).collectFirst { case Seq("--rows", n) => n.toInt }.getOrElse(10)
    val columns = argv.sliding(2).collectFirst { case Seq("--columns", c) => c.split(",").toSeq }
    val full = argv.contains("--layouts")
    try {
      val reader = LanceFileReader.open(new HadoopStorage(), path)
      try {
        val m = reader.metadata
        println(s"File      $path")
        println(s"Version   ${m.version} (${m.fileSize} bytes, ${m.numRows} rows, ${m.columns.size} columns)")
        println("Columns")
        m.columns.zipWithIndex.foreach { case (c, i) =>
          val layouts = c.getPagesList.asScala.map { p =>
            val any = ProtoAny.parseFrom(p.getEncoding.getDirect.getEncoding)
            val name = if (any.getTypeUrl.endsWith("encodings21.PageLayout")) {
              val l = Encodings21Protos.PageLayout.parseFrom(any.getValue)
              if (full) "\n" + com.google.protobuf.TextFormat.printer().printToString(l) else l.getLayoutCase.name.toLowerCase
            } else any.getTypeUrl
            s"${p.getLength}r:$name"
          }
          println(s"  #$i ${layouts.mkString(" ")}")
        }
        val fields = m.schema.fields.filter(f => columns.forall(_.contains(f.name)))
        val allocator = new RootAllocator()
        try {
          val root = reader.read(fields, 0, math.min(rows.toLong, m.numRows), allocator)
          try print(root.contentToTSVString()) finally root.close()
        } finally allocator.close()
        0
      } finally reader.close()
    } catch {
      case e: LanceException => System.err.println(s"error [${e.errorClass}]: ${e.getMessage}"); 1
      case NonFatal(e) => e.printStackTrace(); 1
    }
  }
}
