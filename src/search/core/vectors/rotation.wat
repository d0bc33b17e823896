;; `round`: one round of the codes' rotation over n floats (a power of two, at least 8) at $y:
;; multiply by the ±1 signs at $signs, then the unscaled fast Walsh–Hadamard transform, with
;; WebAssembly SIMD (the first two levels inside each 4-lane vector by shuffles, the others between
;; vectors).
;; `encode`: the codes of $rows normalised rows (dim floats each, dim a multiple of 4) at $src:
;; each row less the centre, zero-padded to n, rotated ($rounds rounds, their signs one after
;; another at $signs), scaled, then its signs packed 8 to a byte (bit b of byte j: value 8j + b > 0)
;; at $codes (n/8 bytes a row) and its estimator scale Σy² / Σ|y| at $alphas (f32), the sums
;; in f64 as the JavaScript loop keeps them.
(module
  (memory (import "env" "memory") 1)
  (func $round (export "round") (param $y i32) (param $signs i32) (param $n i32)
    (local $i i32) (local $j i32) (local $h i32) (local $end i32) (local $a v128) (local $b v128) (local $x v128)
    (local.set $end (i32.add (local.get $y) (i32.shl (local.get $n) (i32.const 2))))
    ;; Signs, and levels h = 1 and h = 2 within each vector.
    (local.set $i (i32.const 0))
    (block $done1
      (loop $l1
        (br_if $done1 (i32.ge_u (local.get $i) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $x
          (f32x4.mul
            (v128.load (i32.add (local.get $y) (local.get $i)))
            (v128.load (i32.add (local.get $signs) (local.get $i)))))
        ;; h = 1: [x1+x0, x0-x1, x3+x2, x2-x3]
        (local.set $x
          (f32x4.add
            (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $x) (local.get $x))
            (f32x4.mul (local.get $x) (v128.const f32x4 1 -1 1 -1))))
        ;; h = 2: [x2+x0, x3+x1, x0-x2, x1-x3]
        (local.set $x
          (f32x4.add
            (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $x) (local.get $x))
            (f32x4.mul (local.get $x) (v128.const f32x4 1 1 -1 -1))))
        (v128.store (i32.add (local.get $y) (local.get $i)) (local.get $x))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l1)))
    ;; Levels h = 4, 8, … n/2 (in bytes: 16 … 2n): butterflies between vectors h apart.
    (local.set $h (i32.const 16))
    (block $done2
      (loop $levels
        (br_if $done2 (i32.ge_u (local.get $h) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $i (local.get $y))
        (block $done3
          (loop $blocks
            (br_if $done3 (i32.ge_u (local.get $i) (local.get $end)))
            (local.set $j (local.get $i))
            (block $done4
              (loop $pairs
                (br_if $done4 (i32.ge_u (local.get $j) (i32.add (local.get $i) (local.get $h))))
                (local.set $a (v128.load (local.get $j)))
                (local.set $b (v128.load (i32.add (local.get $j) (local.get $h))))
                (v128.store (local.get $j) (f32x4.add (local.get $a) (local.get $b)))
                (v128.store (i32.add (local.get $j) (local.get $h)) (f32x4.sub (local.get $a) (local.get $b)))
                (local.set $j (i32.add (local.get $j) (i32.const 16)))
                (br $pairs)))
            (local.set $i (i32.add (local.get $i) (i32.shl (local.get $h) (i32.const 1))))
            (br $blocks)))
        (local.set $h (i32.shl (local.get $h) (i32.const 1)))
        (br $levels))))
  ;; y's 4 floats at $v, widened to f64 as two pairs, squared and absolute, added to the sums.
  (func $sums (param $v v128) (param $sq v128) (param $abs v128) (result v128 v128)
    (local $lo v128) (local $hi v128)
    (local.set $lo (f64x2.promote_low_f32x4 (local.get $v)))
    (local.set $hi (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
    (f64x2.add (local.get $sq) (f64x2.add (f64x2.mul (local.get $lo) (local.get $lo)) (f64x2.mul (local.get $hi) (local.get $hi))))
    (f64x2.add (local.get $abs) (f64x2.add (f64x2.abs (local.get $lo)) (f64x2.abs (local.get $hi)))))
  (func (export "encode") (param $src i32) (param $rows i32) (param $dim i32) (param $centre i32) (param $y i32) (param $signs i32) (param $rounds i32) (param $n i32) (param $scale f32) (param $codes i32) (param $alphas i32)
    (local $r i32) (local $d i32) (local $k i32) (local $row i32) (local $code i32) (local $s v128) (local $v1 v128) (local $v2 v128) (local $sq v128) (local $abs v128) (local $sumSq f64) (local $sumAbs f64)
    (local.set $s (f32x4.splat (local.get $scale)))
    (local.set $r (i32.const 0))
    (block $doneRows
      (loop $eachRow
        (br_if $doneRows (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $r) (i32.shl (local.get $dim) (i32.const 2)))))
        ;; The row less the centre, then zeros to n.
        (local.set $d (i32.const 0))
        (block $doneCopy
          (loop $copy
            (br_if $doneCopy (i32.ge_u (local.get $d) (i32.shl (local.get $dim) (i32.const 2))))
            (v128.store (i32.add (local.get $y) (local.get $d))
              (f32x4.sub (v128.load (i32.add (local.get $row) (local.get $d))) (v128.load (i32.add (local.get $centre) (local.get $d)))))
            (local.set $d (i32.add (local.get $d) (i32.const 16)))
            (br $copy)))
        (block $donePad
          (loop $pad
            (br_if $donePad (i32.ge_u (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
            (v128.store (i32.add (local.get $y) (local.get $d)) (v128.const i32x4 0 0 0 0))
            (local.set $d (i32.add (local.get $d) (i32.const 16)))
            (br $pad)))
        (local.set $k (i32.const 0))
        (block $doneRounds
          (loop $eachRound
            (br_if $doneRounds (i32.ge_u (local.get $k) (local.get $rounds)))
            (call $round (local.get $y) (i32.add (local.get $signs) (i32.mul (local.get $k) (i32.shl (local.get $n) (i32.const 2)))) (local.get $n))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $eachRound)))
        ;; Scaled, signs packed, sums: 8 values (one byte) a step.
        (local.set $code (i32.add (local.get $codes) (i32.mul (local.get $r) (i32.shr_u (local.get $n) (i32.const 3)))))
        (local.set $sq (v128.const i32x4 0 0 0 0))
        (local.set $abs (v128.const i32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        (block $donePack
          (loop $pack
            (br_if $donePack (i32.ge_u (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
            (local.set $v1 (f32x4.mul (v128.load (i32.add (local.get $y) (local.get $d))) (local.get $s)))
            (local.set $v2 (f32x4.mul (v128.load (i32.add (local.get $y) (i32.add (local.get $d) (i32.const 16)))) (local.get $s)))
            (i32.store8 (i32.add (local.get $code) (i32.shr_u (local.get $d) (i32.const 5)))
              (i32.or
                (i32x4.bitmask (f32x4.gt (local.get $v1) (v128.const i32x4 0 0 0 0)))
                (i32.shl (i32x4.bitmask (f32x4.gt (local.get $v2) (v128.const i32x4 0 0 0 0))) (i32.const 4))))
            (call $sums (local.get $v1) (local.get $sq) (local.get $abs))
            (local.set $abs)
            (local.set $sq)
            (call $sums (local.get $v2) (local.get $sq) (local.get $abs))
            (local.set $abs)
            (local.set $sq)
            (local.set $d (i32.add (local.get $d) (i32.const 32)))
            (br $pack)))
        (local.set $sumSq (f64.add (f64x2.extract_lane 0 (local.get $sq)) (f64x2.extract_lane 1 (local.get $sq))))
        (local.set $sumAbs (f64.add (f64x2.extract_lane 0 (local.get $abs)) (f64x2.extract_lane 1 (local.get $abs))))
        (f32.store (i32.add (local.get $alphas) (i32.shl (local.get $r) (i32.const 2)))
          (select (f32.demote_f64 (f64.div (local.get $sumSq) (local.get $sumAbs))) (f32.const 0) (f64.gt (local.get $sumAbs) (f64.const 0))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $eachRow))))
  ;; `normalise`: $rows rows of dim floats (a multiple of 4) at $src scaled to length 1 in place
  ;; (a zero row stays zero), each value then added to the f64 sums at $sum: the squares summed in
  ;; f64 and each value scaled in f64 then rounded, as the JavaScript loop does.
  (func (export "normalise") (param $src i32) (param $rows i32) (param $dim i32) (param $sum i32)
    (local $r i32) (local $d i32) (local $row i32) (local $bytes i32) (local $v v128) (local $lo v128) (local $hi v128) (local $q v128) (local $inv v128) (local $qs f64)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $r (i32.const 0))
    (block $doneRows
      (loop $eachRow
        (br_if $doneRows (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $r) (local.get $bytes))))
        (local.set $q (v128.const i32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        (block $doneSquares
          (loop $squares
            (br_if $doneSquares (i32.ge_u (local.get $d) (local.get $bytes)))
            (local.set $v (v128.load (i32.add (local.get $row) (local.get $d))))
            (local.set $lo (f64x2.promote_low_f32x4 (local.get $v)))
            (local.set $hi (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
            (local.set $q (f64x2.add (local.get $q) (f64x2.add (f64x2.mul (local.get $lo) (local.get $lo)) (f64x2.mul (local.get $hi) (local.get $hi)))))
            (local.set $d (i32.add (local.get $d) (i32.const 16)))
            (br $squares)))
        (local.set $qs (f64.add (f64x2.extract_lane 0 (local.get $q)) (f64x2.extract_lane 1 (local.get $q))))
        (local.set $inv (f64x2.splat (select (f64.div (f64.const 1) (f64.sqrt (local.get $qs))) (f64.const 0) (f64.gt (local.get $qs) (f64.const 0)))))
        (local.set $d (i32.const 0))
        (block $doneScale
          (loop $scale
            (br_if $doneScale (i32.ge_u (local.get $d) (local.get $bytes)))
            (local.set $v (v128.load (i32.add (local.get $row) (local.get $d))))
            (local.set $lo (f64x2.mul (f64x2.promote_low_f32x4 (local.get $v)) (local.get $inv)))
            (local.set $hi (f64x2.mul (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))) (local.get $inv)))
            ;; Rounded to f32 (as stored), then widened again for the sums.
            (local.set $v (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (f32x4.demote_f64x2_zero (local.get $lo)) (f32x4.demote_f64x2_zero (local.get $hi))))
            (v128.store (i32.add (local.get $row) (local.get $d)) (local.get $v))
            (v128.store (i32.add (local.get $sum) (i32.shl (local.get $d) (i32.const 1)))
              (f64x2.add (v128.load (i32.add (local.get $sum) (i32.shl (local.get $d) (i32.const 1)))) (f64x2.promote_low_f32x4 (local.get $v))))
            (v128.store (i32.add (local.get $sum) (i32.add (i32.shl (local.get $d) (i32.const 1)) (i32.const 16)))
              (f64x2.add (v128.load (i32.add (local.get $sum) (i32.add (i32.shl (local.get $d) (i32.const 1)) (i32.const 16))))
                (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v)))))
            (local.set $d (i32.add (local.get $d) (i32.const 16)))
            (br $scale)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $eachRow))))
)
