;; `decode`: $n big-endian IEEE 754 halves at $src (pgvector's halfvec elements as sent) as floats
;; at $dst, with WebAssembly SIMD, eight at a time; returns the sum of their squares (infinite or
;; NaN when an element is not finite). Each half's exponent and mantissa, shifted into a float's
;; place, times 2^112 is its value (subnormals included); an all-ones exponent stays infinite or NaN.
(module
  (memory (import "env" "memory") 1)
  (func $four (param $u v128) (result v128)
    (local $em v128) (local $f v128)
    (local.set $em (v128.and (local.get $u) (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)))
    (local.set $f
      (f32x4.mul
        (i32x4.shl (local.get $em) (i32.const 13))
        (v128.const f32x4 0x1p112 0x1p112 0x1p112 0x1p112)))
    (local.set $f
      (v128.bitselect
        (v128.or (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000))
        (local.get $f)
        (i32x4.ge_u (local.get $em) (v128.const i32x4 0x7c00 0x7c00 0x7c00 0x7c00))))
    (v128.or
      (local.get $f)
      (i32x4.shl (v128.and (local.get $u) (v128.const i32x4 0x8000 0x8000 0x8000 0x8000)) (i32.const 16))))
  (func $decode (export "decode") (param $src i32) (param $dst i32) (param $n i32) (result f32)
    (local $i i32) (local $end i32) (local $h v128) (local $lo v128) (local $hi v128) (local $sum v128) (local $x f32) (local $total f32)
    (local.set $end (i32.and (local.get $n) (i32.const -8)))
    (block $done
      (loop $eight
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $h
          (i8x16.shuffle 1 0 3 2 5 4 7 6 9 8 11 10 13 12 15 14
            (v128.load (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1))))
            (v128.const i32x4 0 0 0 0)))
        (local.set $lo (call $four (i32x4.extend_low_i16x8_u (local.get $h))))
        (local.set $hi (call $four (i32x4.extend_high_i16x8_u (local.get $h))))
        (v128.store (i32.add (local.get $dst) (i32.shl (local.get $i) (i32.const 2))) (local.get $lo))
        (v128.store offset=16 (i32.add (local.get $dst) (i32.shl (local.get $i) (i32.const 2))) (local.get $hi))
        (local.set $sum
          (f32x4.add (local.get $sum)
            (f32x4.add (f32x4.mul (local.get $lo) (local.get $lo)) (f32x4.mul (local.get $hi) (local.get $hi)))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $eight)))
    (local.set $total
      (f32.add
        (f32.add (f32x4.extract_lane 0 (local.get $sum)) (f32x4.extract_lane 1 (local.get $sum)))
        (f32.add (f32x4.extract_lane 2 (local.get $sum)) (f32x4.extract_lane 3 (local.get $sum)))))
    ;; The last n mod 8, one at a time.
    (block $tail
      (loop $one
        (br_if $tail (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $x
          (f32x4.extract_lane 0
            (call $four
              (i32x4.splat
                (i32.or
                  (i32.shl (i32.load8_u (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))) (i32.const 8))
                  (i32.load8_u offset=1 (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))))))))
        (f32.store (i32.add (local.get $dst) (i32.shl (local.get $i) (i32.const 2))) (local.get $x))
        (local.set $total (f32.add (local.get $total) (f32.mul (local.get $x) (local.get $x))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $one)))
    (local.get $total))
)
