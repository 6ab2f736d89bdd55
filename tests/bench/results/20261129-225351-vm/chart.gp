set terminal pngcairo size 1280,720 font 'sans,10'
set termoption noenhanced
set output 'chart.png'
set grid ytics
set key inside top right vertical
set ylabel 'IOPS (median)'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set multiplot layout 1,2 title '4k IOPS by system and NBD connection count (rbdx-cN = N connections; median of rounds)'
$d0 << EOD
fio-rbd 6907 3709
rbdx-c1-io_uring 5209 3460
rbdx-c1-eventfd 5245 3675
qemu-nbd 3997 2890
qsd 3634 2700
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 21593 9720
rbdx-c1-io_uring 16853 6914
rbdx-c2-io_uring 18926 7613
rbdx-c4-io_uring 15894 7046
rbdx-c1-eventfd 16524 7589
rbdx-c2-eventfd 18837 7425
rbdx-c4-eventfd 15250 8170
qemu-nbd 7565 8249
qsd 8463 7844
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
