;; Hamming distances between one query code and n stored codes (1 bit per dimension), with
;; WebAssembly SIMD: XOR, per-byte popcount, widen-and-add. Codes are `bytes` long, a multiple
;; of 16. Distances are written as u16 (up to 65,535 bits).
(module
  (memory (import "env" "memory") 1)
  (func (export "hamming") (param $codes i32) (param $query i32) (param $n i32) (param $bytes i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $acc v128) (local $sum v128)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $row (i32.add (local.get $codes) (i32.mul (local.get $i) (local.get $bytes))))
        (local.set $j (i32.const 0))
        (block $rowdone
          (loop $chunks
            (br_if $rowdone (i32.ge_u (local.get $j) (local.get $bytes)))
            (local.set $acc
              (i16x8.add (local.get $acc)
                (i16x8.extadd_pairwise_i8x16_u
                  (i8x16.popcnt
                    (v128.xor
                      (v128.load (i32.add (local.get $row) (local.get $j)))
                      (v128.load (i32.add (local.get $query) (local.get $j))))))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $chunks)))
        (local.set $sum (i32x4.extadd_pairwise_i16x8_u (local.get $acc)))
        (i32.store16
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 1)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
            (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows)))))
