package io.sparklance.core.namespace

import java.io.ByteArrayOutputStream
import java.net.{InetAddress, ServerSocket, SocketTimeoutException, URI}
import java.nio.ByteBuffer

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.StorageException
import io.sparklance.core.namespace.HiveMetastoreClient._

/**
 * The Thrift binary protocol of [[HiveMetastoreClient]] against a socket that answers with given bytes: random
 * values survive a call and its reply, and bad answers (huge lengths, a server error, no server) are clear errors.
 * tests/test_hive_namespace.py runs the client against a real Hive Metastore.
 */
class HiveMetastoreClientSuite extends AnyFunSuite {

  /** Serves one connection: reads the request until the client waits, then writes `answer(request)`. */
  private def serving[T](answer: Array[Byte] => Array[Byte])(body: URI => T): T = {
    val server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress)
    val thread = new Thread(() => {
      val socket = server.accept()
      try {
        socket.setSoTimeout(300)
        val request = new ByteArrayOutputStream()
        val buffer = new Array[Byte](8192)
        var reading = true
        while (reading) {
          try {
            val n = socket.getInputStream.read(buffer)
            if (n < 0) reading = false else request.write(buffer, 0, n)
          } catch { case _: SocketTimeoutException => reading = request.size() == 0 }
        }
        socket.getOutputStream.write(answer(request.toByteArray))
        socket.getOutputStream.flush()
      } finally socket.close()
    })
    thread.setDaemon(true)
    thread.start()
    try body(new URI(s"thrift://127.0.0.1:${server.getLocalPort}"))
    finally { thread.join(10000); server.close() }
  }

  /** The request as a reply: the call's arguments struct becomes the result struct. */
  private def echo(request: Array[Byte]): Array[Byte] = {
    val reply = request.clone()
    ByteBuffer.wrap(reply).putInt(0x80010002)
    reply
  }

  private def randomValue(rng: Random, wireType: Byte, depth: Int): Value = wireType match {
    case TBool => Bool(rng.nextBoolean())
    case TByte => I8(rng.nextInt(256).toByte)
    case TI16 => I16(rng.nextInt(65536).toShort)
    case TI32 => I32(rng.nextInt())
    case TI64 => I64(rng.nextLong())
    case TDouble => Dbl(rng.nextGaussian())
    case TString => Bin(Array.fill(rng.nextInt(20))(rng.nextInt(256).toByte).toSeq)
    case TList | TSet =>
      val element = randomType(rng, depth + 1)
      ListOf(element, Seq.fill(rng.nextInt(4))(randomValue(rng, element, depth + 1)), isSet = wireType == TSet)
    case TMap =>
      val v = randomType(rng, depth + 1)
      MapOf(TString, v, Seq.fill(rng.nextInt(4))((randomValue(rng, TString, depth + 1), randomValue(rng, v, depth + 1))))
    case _ => Struct((1 to rng.nextInt(5)).map(i => i.toShort -> randomValue(rng, randomType(rng, depth + 1), depth + 1)))
  }

  private def randomType(rng: Random, depth: Int): Byte = {
    val scalars = Seq(TBool, TByte, TI16, TI32, TI64, TDouble, TString)
    val all = if (depth >= 3) scalars else scalars ++ Seq(TList, TSet, TMap, TStruct)
    all(rng.nextInt(all.size))
  }

  test("random values, nested in lists, sets, maps and structs, come back as they were sent") {
    val rng = new Random(sys.env.get("SPARKLANCE_FUZZ_SEED").map(_.toLong).getOrElse(20261127L))
    (1 to sys.env.get("SPARKLANCE_FUZZ_N").map(_.toInt).getOrElse(20)).foreach { _ =>
      val value = randomValue(rng, TStruct, 0)
      val got = serving(echo)(uri => new HiveMetastoreClient(uri, None).call("get_table", 0.toShort -> value))
      assert(got == Right(Some(value)))
    }
  }

  test("a declared exception is its field id and message; a void reply is None") {
    val thrown = Struct(Seq(2.toShort -> Struct(Seq(1.toShort -> Text("no such table")))))
    assert(serving(echo)(uri => new HiveMetastoreClient(uri, None).call("get_table", 2.toShort -> thrown.fields.head._2)) ==
      Left(2 -> "no such table"))
    assert(serving(echo)(uri => new HiveMetastoreClient(uri, None).call("drop_table")) == Right(None))
  }

  test("a length past the client's limit is refused before it is allocated, naming the metastore") {
    val answer = ByteBuffer.allocate(64)
    answer.putInt(0x80010002).putInt(3).put("get".getBytes).putInt(0)
    answer.put(TString).putShort(0.toShort).putInt(Int.MaxValue)
    serving(_ => answer.array()) { uri =>
      val e = intercept[StorageException](new HiveMetastoreClient(uri, None).call("get_all_tables"))
      assert(e.getMessage.contains(uri.toString) && e.getMessage.contains("out of range"))
    }
  }

  test("a server error (an unknown method) is an ApplicationException with Thrift's type") {
    val out = ByteBuffer.allocate(64)
    out.putInt(0x80010003).putInt(3).put("get".getBytes).putInt(0)
    out.put(TString).putShort(1.toShort).putInt(7).put("unknown".getBytes).put(TI32).putShort(2.toShort).putInt(1).put(0.toByte)
    serving(_ => out.array()) { uri =>
      val e = intercept[ApplicationException](new HiveMetastoreClient(uri, None).call("get_catalogs"))
      assert(e.kind == UnknownMethod && e.getMessage.contains("unknown"))
    }
  }

  test("a metastore with SASL (its error frame, or a closed connection) is refused, naming the setting") {
    // Thrift's SASL transport answers a frame it cannot read with status ERROR (4), a length and a message.
    val message = "Invalid status -128".getBytes
    val frame = ByteBuffer.allocate(5 + message.length).put(4.toByte).putInt(message.length).put(message).array()
    Seq(frame, Array.emptyByteArray).foreach { answer =>
      serving(_ => answer) { uri =>
        val e = intercept[StorageException](new HiveMetastoreClient(uri, None).call("get_all_databases"))
        assert(e.getMessage.contains(uri.toString) && e.getMessage.contains("hive.metastore.sasl.enabled") &&
          e.getMessage.contains("not supported"), e.getMessage)
      }
    }
  }

  test("a metastore that cannot be reached is a storage error naming its URI and the call") {
    val port = { val s = new ServerSocket(0); try s.getLocalPort finally s.close() }
    val e = intercept[StorageException](new HiveMetastoreClient(new URI(s"thrift://127.0.0.1:$port"), None).call("get_all_databases"))
    assert(e.getMessage.contains(s"thrift://127.0.0.1:$port") && e.getMessage.contains("get_all_databases"))
  }
}
